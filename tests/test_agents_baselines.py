"""Agents behind one interface: legality, reproducibility, specs, checkpoints, the network."""

import numpy as np
import pytest
import torch

import agents
from agents import AgentSpecError, CheckpointError, make_agent, register_agent
from agents.alphazero import AlphaZeroAgent
from agents.arena import play_match
from agents.base import Agent
from agents.checkpoint import load_checkpoint, save_checkpoint
from agents.mcts import SearchConfig
from agents.network import ConfigError, NetConfig, build_network, masked_log_softmax
from highway_env import core
from highway_env.az_game import HighwayGame
from agent_kinds import builtin_agent_kinds

G = HighwayGame()


def _states(seed=0, n=12, filled=5):
    rng = np.random.default_rng(seed)
    return G.as_states([core.random_board(rng, filled) for _ in range(n)])


def _tiny_checkpoint(path, kind="mlp"):
    cfg = NetConfig(kind=kind, hidden=16, layers=1, channels=8, blocks=1, obs_shape=G.obs_shape,
                    num_actions=G.num_actions)
    torch.manual_seed(0)
    net = build_network(cfg)
    save_checkpoint(path, {"game": "highway", "net_config": cfg.to_dict(), "model": net.state_dict(),
                           "search_config": SearchConfig(simulations=8).to_dict()})
    return path


#: An example spec of each agent kind whose moves test_baselines_legal_and_reproducible checks.
BASELINE_SPECS = {"random": "random", "greedy": "greedy", "mcts": "mcts:30"}
#: The kinds tested elsewhere, and where.
TESTED_ELSEWHERE = {"az": "test_alphazero_from_checkpoint here", "perfect": "tests/test_perfect_player.py"}


def test_every_agent_kind_is_tested():
    """A kind registered in agents/registry.py but listed in neither table has no test of its moves."""
    untested = [k for k in builtin_agent_kinds() if k not in BASELINE_SPECS and k not in TESTED_ELSEWHERE]
    assert not untested, (f"agent kind(s) {untested} have no test: add an example spec to BASELINE_SPECS in "
                          "tests/test_agents_baselines.py (its moves are then checked legal and reproducible) "
                          "and its malformed specs to test_bad_specs")



def _agent_kind_lists() -> dict[str, str]:
    """Where the docs and help texts list the agent kinds (CONTRIBUTING.md, 'A new agent kind', step 4)."""
    import re
    from pathlib import Path

    import evaluate
    from agents import registry
    from highway_env.play import opponents

    root = Path(__file__).resolve().parents[1]

    def line_with(path, marker):
        return next(line for line in (root / path).read_text().splitlines() if marker in line)

    demo = (root / "highway_env/demo.py").read_text()
    return {"agents/registry.py's docstring": registry.__doc__, "make_agent's docstring": registry.make_agent.__doc__,
            "agents/__init__.py's docstring": agents.__doc__, "evaluate.py's docstring": evaluate.__doc__,
            "evaluate.py --agent's help": next(a.help for a in evaluate.build_parser()._actions if a.dest == "agent"),
            "highway_env/demo.py --a's help": re.search(r'"--a",.*?help=(.*?)\)', demo, re.S).group(1),
            "highway_env/play/opponents.py's docstring": opponents.__doc__,
            "agents/README.md's example": line_with("agents/README.md", 'agents.make_agent("mcts:'),
            "README.md's 'Using it in research code'": line_with("README.md", "* Agents: `agents.make_agent(")}


def test_every_agent_kind_is_in_the_lists_of_kinds():
    """The lists of kinds are text: a kind registered in agents/registry.py and missing from them is
    one that ``evaluate.py --help`` and the docs do not offer."""
    import re

    missing = {where: kinds for where, text in _agent_kind_lists().items()
               if (kinds := [k for k in builtin_agent_kinds() if not re.search(rf"(?<![\w-]){k}(?![\w-])", text)])}
    assert not missing, (f"agent kind(s) missing from these lists: {missing}; add them (CONTRIBUTING.md, "
                         "'A new agent kind', step 4)")

@pytest.mark.parametrize("spec", BASELINE_SPECS.values())
def test_baselines_legal_and_reproducible(spec):
    s = _states()
    a1 = make_agent(spec, G, seed=3).act_batch(s)
    a2 = make_agent(spec, G, seed=3).act_batch(s)
    assert np.array_equal(a1, a2)
    assert G.legal_masks(s)[np.arange(len(s)), a1].all()
    one = make_agent(spec, G, seed=3)
    a = one.act(core.Board(tuple(int(v) for v in s[0])))
    assert isinstance(a, int) and core.Board(tuple(int(v) for v in s[0])).is_legal(a)


@pytest.mark.parametrize("spec", BASELINE_SPECS.values())
def test_act_takes_a_position_in_every_documented_form(spec):
    """agents/README.md: ``act`` takes a board string, a ``core.Board`` or 16 ints; a list of 16 ints
    is one position (it was read as a batch of 16 and failed on its first int)."""
    cells = [int(v) for v in _states(seed=5, n=1)[0]]
    forms = [",".join(map(str, cells)), core.Board(tuple(cells)), np.array(cells), cells, tuple(cells),
             [np.int8(v) for v in cells]]
    moves = {make_agent(spec, G, seed=3).act(form, np.random.default_rng(0)) for form in forms}
    assert len(moves) == 1 and core.Board(tuple(cells)).is_legal(moves.pop())
    assert G.as_states([cells, cells]).shape == (2, 16)  # a list of positions stays a batch
    with pytest.raises(agents.GameError, match=r"16 cells, got shape \(15,\)"):
        make_agent(spec, G).act(cells[:15])


@pytest.mark.parametrize("spec", BASELINE_SPECS.values())
def test_baselines_take_randomness_from_the_given_rng(spec):
    """The arena and the evaluation hand each game its own generator (``play_out``); an agent that
    drew from its own ``self.rng`` instead would play moves that depend on which games it played before."""
    s = _states(seed=4, n=24)
    a1 = make_agent(spec, G, seed=1).act_batch(s, np.random.default_rng(7))
    a2 = make_agent(spec, G, seed=2).act_batch(s, np.random.default_rng(7))
    assert np.array_equal(a1, a2), f"{spec}: act_batch(states, rng) must draw from rng (self._rng(rng)), not self.rng"


def test_greedy_takes_a_winning_last_move():
    # greedy maximises the mover's final margin on the last move
    b = core.random_board(np.random.default_rng(1), 15)
    a = make_agent("greedy", G, seed=0).act(b)
    sign = 1 if b.to_move == 0 else -1  # the margin is A's; B wants it low
    best = max(sign * b.apply(x).outcome().margin for x in b.legal_actions())
    assert sign * b.apply(a).outcome().margin == best


def test_greedy_beats_random():
    r = play_match(make_agent("greedy", G, 0), make_agent("random", G, 1), G, 16, seed=0)
    assert r.score > 0.8 and r.games == 16


def test_oracle_style_agent_fits_interface():
    class FirstLegal(Agent):  # an external oracle only needs act()
        name = "first"

        def act(self, state, rng=None):
            return int(np.flatnonzero(self.game.legal_masks(self.game.as_states(state)))[0])

    register_agent("first_legal_test", lambda args, game, seed: FirstLegal(game, seed), replace=True)
    ag = make_agent("first_legal_test", G)
    s = _states()
    assert G.legal_masks(s)[np.arange(len(s)), ag.act_batch(s)].all()
    assert play_match(ag, make_agent("random", G, 0), G, 4).games == 4


@pytest.mark.parametrize("bad", ["", "nope", "mcts", "mcts:x", "mcts:0", "random:1", "az", "az:/no/such.pt"])
def test_bad_specs(bad):
    with pytest.raises((AgentSpecError, CheckpointError)):
        make_agent(bad, G)


@pytest.mark.parametrize("spec", ["greedy:", "random:", "perfect:", "mcts:", "perfect:margin:"])
def test_a_trailing_colon_is_an_empty_argument_refused_naming_the_spec(spec):
    with pytest.raises(AgentSpecError, match=f"bad agent spec {spec!r}"):
        make_agent(spec, G, seed=0)


@pytest.mark.parametrize("args", ["", ":", ":x", ":-1", ":0", ":1.5", ":1:2:3", ":" + "9" * 30])
def test_every_agent_kind_refuses_bad_arguments_with_a_spec_error(args):
    """A factory that indexes a missing argument (``args[0]``) or int()s a word would raise
    IndexError / a bare ValueError, which evaluate.py, the demo and the play server show as a traceback."""
    for kind in builtin_agent_kinds():
        spec = kind + args
        try:
            make_agent(spec, G, seed=0)  # some of these are valid ("random", "perfect"): fine
        except (AgentSpecError, CheckpointError) as e:
            named = [part for part in (kind, *args.split(":")) if part and part in str(e)]
            assert named, f"{spec!r}: the error names neither the kind nor the bad argument: {e}"
        except Exception as e:  # noqa: BLE001 -- any other exception is the fault under test
            pytest.fail(f"make_agent({spec!r}) raised {type(e).__name__}: {e}; a factory must raise "
                        "AgentSpecError naming the spec for arguments it cannot take (see _mcts in "
                        "agents/registry.py)")


@pytest.mark.parametrize("rest, parts", [("", ("", None)), ("a.pt", ("a.pt", None)), ("a.pt:50", ("a.pt", "50")),
                                         ("C:/x/a.pt:0", ("C:/x/a.pt", "0")), ("a:b.pt", ("a:b.pt", None)),
                                         ("50", ("50", None)), ("a.pt:-5", ("a.pt:-5", None))])
def test_one_az_spec_parser(rest, parts):
    """az:PATH[:SIMS] was split in agents/registry.py and again in highway_env/play/opponents.py:
    the registry's split_az_args serves both (and the play server's limits)."""
    import agents
    from agents.registry import az_checkpoint, split_az_args
    from highway_env.play.opponents import resolve_spec

    assert split_az_args(rest) == parts
    assert az_checkpoint(f"az:{rest}") == (None if not rest else (parts[0], f":{parts[1]}" if parts[1] else ""))
    assert resolve_spec(f"az:shipped:{parts[1]}" if parts[1] else "az") == ":".join(
        ["az", str(agents.PRETRAINED), *([parts[1]] if parts[1] else [])])


@pytest.mark.parametrize("kind", ["mlp", "resnet"])
def test_network_shapes(kind):
    net = build_network(NetConfig(kind=kind, hidden=32, layers=2, channels=8, blocks=1,
                                  obs_shape=G.obs_shape, num_actions=256))
    obs = torch.from_numpy(G.observations(_states(n=5)))
    logits, value, score = net(obs)
    assert logits.shape == (5, 256) and value.shape == (5,) and score.shape == (5,)
    assert (value.abs() <= 1).all()
    mask = torch.zeros(5, 256, dtype=torch.bool)
    mask[:, :3] = True
    p = masked_log_softmax(logits, mask).exp()
    assert torch.allclose(p.sum(1), torch.ones(5)) and (p[:, 3:] < 1e-6).all()


def test_net_config_errors_name_the_value():
    with pytest.raises(ConfigError, match="'cnn'"):
        NetConfig(kind="cnn", obs_shape=(4, 4, 16), num_actions=256).validate()
    with pytest.raises(ConfigError, match="hidden.*-3"):
        NetConfig(hidden=-3, obs_shape=(4, 4, 16), num_actions=256).validate()


@pytest.mark.parametrize("kind", ["mlp", "resnet"])
def test_alphazero_from_checkpoint(tmp_path, kind):
    path = _tiny_checkpoint(tmp_path / "az.pt", kind)
    s = _states()
    for sims in (None, 0, 4):
        ag = AlphaZeroAgent.from_checkpoint(path, simulations=sims, seed=0)
        a = ag.act_batch(s)
        assert G.legal_masks(s)[np.arange(len(s)), a].all()
        assert np.array_equal(a, AlphaZeroAgent.from_checkpoint(path, simulations=sims, seed=0).act_batch(s))
    assert make_agent(f"az:{path}:2", G).search.config.simulations == 2


def test_corrupt_checkpoint_names_file(tmp_path):
    p = _tiny_checkpoint(tmp_path / "c.pt")
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="c.pt.*corrupt"):
        load_checkpoint(p)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="junk.pt"):
        make_agent(f"az:{tmp_path / 'junk.pt'}", G)
    torch.save({"x": 1}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="other.pt"):
        load_checkpoint(tmp_path / "other.pt")


@pytest.mark.skipif(not agents.PRETRAINED.exists(), reason="no shipped checkpoint")
def test_load_pretrained():
    ag = agents.load_pretrained(simulations=8, seed=0)
    s = _states(n=4)
    assert G.legal_masks(s)[np.arange(4), ag.act_batch(s)].all()
    assert agents.PRETRAINED.stat().st_size < 5_000_000


def test_perfect_is_the_player_each_game_names():
    from highway_env.blackpath.az_game import BlackPathGame
    from highway_env.blackpath.perfect import BlackPathPerfect
    from highway_env.solver.player import PerfectPlayer

    assert isinstance(make_agent("perfect:random", G, seed=0), PerfectPlayer)
    assert isinstance(make_agent("perfect", BlackPathGame(), seed=0), BlackPathPerfect)
    with pytest.raises(AgentSpecError, match="no tie-break"):
        make_agent("perfect:hardest", BlackPathGame())

    class NoPerfect(HighwayGame):
        perfect_player = None

    with pytest.raises(AgentSpecError, match="names no perfect player"):
        make_agent("perfect", NoPerfect())


@pytest.mark.parametrize("spec, error, detail", [
    ("mcts:abc", AgentSpecError, "mcts: N must be an integer, got 'abc'"),
    ("mcts:\u00b9", AgentSpecError, "mcts: N must be an integer, got '\u00b9'"),  # isdigit, not int()
    ("az:", AgentSpecError, "az spec is az:PATH[:SIMS]"),
    ("random:1", AgentSpecError, "agent 'random' takes no arguments, got '1'"),
    ("perfect:nosuch", AgentSpecError, "tie-break must be one of"),
    ("nosuch", AgentSpecError, "unknown agent kind 'nosuch'"),
    ("az:/no/such.pt", CheckpointError, "checkpoint '/no/such.pt' does not exist"),
    ("plugin_bare:x", AgentSpecError, "plugin_bare takes no 'x'"),
    ("plugin_ckpt:y.pt", CheckpointError, "checkpoint 'y.pt' is damaged"),
])
def test_make_agent_errors_name_the_whole_spec_once_and_keep_their_type(monkeypatch, spec, error, detail):
    """A factory names only the argument it checks ("mcts: N must be an integer"): callers of
    make_agent other than evaluate.py (the benchmark, scripts) got no word of the spec typed."""
    from agents import registry

    def bare(args, game, seed):
        raise AgentSpecError(f"plugin_bare takes no {args[0]!r}")

    def damaged(args, game, seed):
        raise CheckpointError(f"checkpoint {args[0]!r} is damaged")

    monkeypatch.setitem(registry._AGENTS, "plugin_bare", bare)
    monkeypatch.setitem(registry._AGENTS, "plugin_ckpt", damaged)
    with pytest.raises(error) as e:
        make_agent(spec, G)
    assert type(e.value) is error
    assert str(e.value).startswith(f"bad agent spec {spec!r}: ") and detail in str(e.value)
    assert str(e.value).count("bad agent spec") == 1


def test_make_agent_on_a_policy_spec_points_to_the_benchmark():
    with pytest.raises(AgentSpecError, match=r"unknown agent kind 'sb3'.*highway_env.benchmark.evaluate"):
        make_agent("sb3:model.zip", G)


def test_an_az_spec_naming_a_directory_says_so(tmp_path):
    """It said the directory 'does not exist'."""
    with pytest.raises(CheckpointError, match=f"checkpoint '{tmp_path}' is a directory, not a checkpoint file"):
        make_agent(f"az:{tmp_path}", G)


@pytest.mark.parametrize("sims, detail", [("abc", "az: SIMS must be an integer, got 'abc'"),
                                          ("-1", "az: SIMS must be >= 0 and <= 1000000, got -1"),
                                          ("1.5", "az: SIMS must be an integer, got '1.5'")])
def test_a_bad_sims_after_an_existing_checkpoint_is_named_as_sims(tmp_path, sims, detail):
    """az:x.pt:abc said "checkpoint 'x.pt:abc' does not exist" (a PATH may hold ':'), with x.pt there."""
    path = _tiny_checkpoint(tmp_path / "az.pt")
    with pytest.raises(AgentSpecError, match=f": {detail}$"):
        make_agent(f"az:{path}:{sims}", G)
    with pytest.raises(CheckpointError, match="does not exist"):  # no such file either way: the path's fault
        make_agent(f"az:{tmp_path / 'none.pt'}:{sims}", G)


@pytest.mark.parametrize("sims", [-1, "x", True, 1.5, 10**9])
def test_from_checkpoint_and_load_pretrained_refuse_a_bad_simulation_count(tmp_path, sims):
    """load_pretrained(simulations=-1) played 1 simulation without a word; "x" failed inside int()."""
    path = _tiny_checkpoint(tmp_path / "az.pt")
    with pytest.raises(ValueError, match=f"simulations must be an integer in 0..1000000 .*got {sims!r}"):
        AlphaZeroAgent.from_checkpoint(path, simulations=sims)
    with pytest.raises(ValueError, match="simulations must be an integer"):
        agents.load_pretrained("highway_az_1min", simulations=sims)
