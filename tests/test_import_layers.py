"""The modules of ``highway_env`` and ``agents`` import downwards only, in the layers CONTRIBUTING.md
("Which layer may import which") lists, counting imports inside functions (the graph of
``test_import_graph.py``); the few upward edges are named below with their reason."""

from test_import_graph import import_graph

#: CONTRIBUTING.md's layers. A name is one module (or package ``__init__``); ``pkg.*`` is a package
#: and everything under it. The most specific name decides (``highway_env.blackpath.perfect`` is in
#: layer 5, the rest of ``highway_env.blackpath.*`` in 3).
LAYERS = {
    1: ("highway_env.core", "highway_env.atomic_files", "highway_env.cli_args", "highway_env.extras",
        "highway_env.legal_sampling", "highway_env.parent_watch", "highway_env.ray_node_watch",
        "highway_env.registration", "highway_env.run_lock", "highway_env.stall_watch"),
    2: ("highway_env", "highway_env.highway.batch_rules", "highway_env.render", "highway_env.aec",
        "highway_env.shipped", "highway_env.ray_address", "highway_env.retrying_pool"),
    3: ("highway_env.solver.*", "highway_env.ray_tasks", "highway_env.highway", "highway_env.highway.highway",
        "highway_env.batched", "highway_env.gym_env", "highway_env.gym_vector_env", "highway_env.highway_v0",
        "highway_env.blackpath_v0", "highway_env.jumping_v0", "highway_env.blackpath.*", "highway_env.jumping.*", "highway_env.rushhour.*"),
    4: ("agents.*",),
    5: ("highway_env.az_game", "highway_env.blackpath.az_game", "highway_env.blackpath.perfect",
        "highway_env.jumping.az_game", "highway_env.jumping.perfect", "highway_env.evaluation.*",
        "highway_env.benchmark.*", "highway_env.play.*", "highway_env.openspiel.*", "highway_env.integrations.*",
        "highway_env.demo"),
}
#: The upward edges there are, each for a reason (CONTRIBUTING.md names them too).
UPWARD = {
    ("highway_env.solver.player", "agents.base"): "PerfectPlayer is an Agent (agents.base imports torch only "
                                                  "inside SearchAgent.__init__, so the solver stays torch-free)",
    ("highway_env.solver.player", "agents.games"): "inside a function: the default game, get_game('highway')",
    ("highway_env.ray_tasks", "agents"): "inside shipped_runtime_env: the agents package's folder, shipped to "
                                         "the Ray nodes beside highway_env (none of its code runs)",
}
#: What ``agents`` may import from ``highway_env``: helpers, never game code (that it reaches through
#: the "module:Class" strings of GAMES and Game.perfect_player).
AGENTS_HELPERS = {"highway_env.atomic_files", "highway_env.cli_args", "highway_env.core", "highway_env.extras",
                  "highway_env.legal_sampling", "highway_env.parent_watch", "highway_env.ray_tasks",
                  "highway_env.stall_watch"}


def layer_of(module: str) -> int | None:
    best = None  # (length of the name that matched, layer)
    for n, names in LAYERS.items():
        for name in names:
            if name == module:
                return n
            if name.endswith(".*") and (module == name[:-2] or module.startswith(name[:-1])):
                best = max(best or (0, 0), (len(name), n))
    return best and best[1]


def layer_faults(graph: dict[str, set[str]]) -> list[str]:
    """Each import against the layers, as 'a (layer i) -> b (layer j): why not'."""
    faults = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            la, lb = layer_of(a), layer_of(b)
            edge = f"{a} (layer {la}) -> {b} (layer {lb})"
            if la is None or lb is None or (a, b) in UPWARD:
                continue
            if la == 1:
                faults.append(f"{edge}: layer 1 imports nothing of the project")
            elif la == 2 and lb != 1:
                faults.append(f"{edge}: layer 2 imports layer 1 only")
            elif lb > la:
                faults.append(f"{edge}: an upward import")
            elif a.startswith("agents") and b.startswith("highway_env") and b not in AGENTS_HELPERS:
                faults.append(f"{edge}: agents imports only the helpers {sorted(AGENTS_HELPERS)} of highway_env")
    return faults


def test_every_module_has_a_layer():
    missing = sorted(m for m in import_graph() if layer_of(m) is None)
    assert not missing, f"modules in no layer: {missing}; add them to LAYERS here and to CONTRIBUTING.md"


def test_imports_go_down_the_layers():
    faults = layer_faults(import_graph())
    assert not faults, "imports against CONTRIBUTING.md's layers:\n" + "\n".join(faults)


def test_the_upward_edges_listed_exist():
    graph = import_graph()
    gone = [edge for edge in UPWARD if edge[1] not in graph.get(edge[0], ())]
    assert not gone, f"no longer imported, drop them from UPWARD and CONTRIBUTING.md: {gone}"


def test_a_new_upward_import_is_named():
    assert layer_faults({"highway_env.solver.oracle": {"highway_env.evaluation.tasks"},
                         "highway_env.render": {"highway_env.aec"}, "highway_env.core": {"highway_env.cli_args"},
                         "agents.selfplay": {"highway_env.solver.player"}}) == [
        "agents.selfplay (layer 4) -> highway_env.solver.player (layer 3): agents imports only the helpers "
        f"{sorted(AGENTS_HELPERS)} of highway_env",
        "highway_env.core (layer 1) -> highway_env.cli_args (layer 1): layer 1 imports nothing of the project",
        "highway_env.render (layer 2) -> highway_env.aec (layer 2): layer 2 imports layer 1 only",
        "highway_env.solver.oracle (layer 3) -> highway_env.evaluation.tasks (layer 5): an upward import"]
    assert (layer_of("highway_env.blackpath.perfect"), layer_of("highway_env.blackpath.solver"),
            layer_of("highway_env"), layer_of("highway_env.solver")) == (5, 3, 2, 3)
