"""The one topological order of a layer graph: the reader uses it to refuse cycles, the
runtime's compile step (:mod:`ovpool.plan`) to order the layers it runs."""

import heapq

__all__ = ["topological_order"]


def topological_order(layers, edges):
    """The ids of ``layers`` with every layer after the layers feeding it (Kahn's algorithm),
    ties broken by the order of ``layers``. Edges into layers not listed are ignored; a layer on
    or behind a cycle never becomes ready, so it is left out of the order."""
    position = {layer.id: i for i, layer in enumerate(layers)}
    consumers = {layer_id: [] for layer_id in position}
    waiting = dict.fromkeys(position, 0)
    for edge in edges:
        if edge.to_layer in waiting:
            consumers[edge.from_layer].append(edge.to_layer)
            waiting[edge.to_layer] += 1
    ready = [(position[i], i) for i, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, layer_id = heapq.heappop(ready)
        order.append(layer_id)
        for consumer in consumers[layer_id]:
            waiting[consumer] -= 1
            if waiting[consumer] == 0:
                heapq.heappush(ready, (position[consumer], consumer))
    return order
