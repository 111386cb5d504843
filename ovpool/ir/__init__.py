"""OpenVINO IR reading: :func:`read_model` and the parsed model's dataclasses."""

from .model import Attributes, Dimension, Edge, Layer, Model, PartialShape, Port, TensorInfo
from .reader import SUPPORTED_IR_VERSIONS, read_model

__all__ = ["read_model", "SUPPORTED_IR_VERSIONS", "Model", "Layer", "Port", "Edge",
           "TensorInfo", "Dimension", "PartialShape", "Attributes"]
