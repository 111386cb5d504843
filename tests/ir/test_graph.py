"""The one topological order (ovpool.ir.graph), checked on hand-drawn graphs."""

from collections import namedtuple

from ovpool.ir.graph import topological_order

L = namedtuple("L", "id")
E = namedtuple("E", "from_layer to_layer")


def layers(*ids):
    return [L(i) for i in ids]


def test_every_layer_follows_its_producers_ties_in_listed_order():
    # a -> c, b -> c, c -> d; b and a are both ready first: the listed order (b, a) decides.
    order = topological_order(layers("b", "a", "c", "d"),
                              [E("a", "c"), E("b", "c"), E("c", "d")])
    assert order == ["b", "a", "c", "d"]


def test_a_ready_layer_listed_earlier_runs_before_one_listed_later():
    # x and y are independent; z (listed first) waits for y.
    order = topological_order(layers("z", "x", "y"), [E("y", "z")])
    assert order == ["x", "y", "z"]


def test_layers_on_or_behind_a_cycle_are_left_out():
    order = topological_order(layers("p", "q", "r", "s"),
                              [E("p", "q"), E("q", "r"), E("r", "q"), E("r", "s")])
    assert order == ["p"]


def test_edges_into_unlisted_layers_are_ignored():
    order = topological_order(layers("a", "b"), [E("a", "b"), E("b", "unused")])
    assert order == ["a", "b"]
