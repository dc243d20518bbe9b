"""``evaluate.py --game blackpath|jumping|module:Class``: agents of a two-player game other than
Highway against its exact solver, the ``move_values`` of the player its ``Game.perfect_player``
names (:mod:`highway_env.blackpath.perfect`, :mod:`highway_env.jumping.perfect`, or a researcher's
own game such as ``examples/tictactoe_game.py``).

Per agent: **move accuracy** on positions sampled from varied play (each game mixes random and
perfect moves, with a per-game share of random moves from RANDOM_SHARES; distinct live positions,
sampled uniformly) and labelled on the fly by the solver, counted as in
:func:`~highway_env.evaluation.metrics.accuracy`; for scored games (``Game.margins``, as Jumping)
also the points given away as ``margin_loss``; **games against the perfect player** from the start
on each side; a **round robin** between the agents and its Elo. Everything runs in this process
(``--workers`` is not used), on the board ``args.game_options``.
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np

from highway_env.evaluation import metrics
from highway_env.evaluation.provenance import provenance

RANDOM_SHARES = (1.0, 0.5, 0.25, 0.1)


def move_values_fn(game):
    """``(game, state) -> (num_actions,)`` each move's exact value for the mover: the ``move_values``
    of the class whose factory the game's ``perfect_player`` names (``agents.base.BestValueAgent``);
    ValueError naming the game if it has none."""
    from agents.registry import perfect_player_class

    fn = getattr(perfect_player_class(game), "move_values", None)
    if fn is None:
        raise ValueError(f"game {game.name!r}: its perfect player {type(game).perfect_player!r} gives no "
                         "move_values (name a BestValueAgent subclass's from_spec), so positions cannot be labelled")
    return fn


def _plies(game, states) -> np.ndarray:
    """Each position's ply (all 0 for a game that does not count them: one ply bucket)."""
    plies = game.plies(states) if len(states) else None
    return np.zeros(len(states), np.int64) if plies is None else np.asarray(plies, np.int64)


def play_games(game, agent_a, agent_b, games: int, seed) -> np.ndarray:
    """``games`` games from the start, ``agent_a`` first; -> final results from A's side: the score
    margin (Jumping) or +-1 (Black Path)."""
    if games == 0:
        return np.zeros(0, np.int64)
    from agents.arena import play_out

    rngs = [np.random.default_rng([*np.atleast_1d(seed).tolist(), k]) for k in (0, 1)]
    states = play_out(game, game.initial_states(games), (agent_a, agent_b), np.zeros(games, np.int64), rngs)
    return (game.margins if hasattr(game, "margins") else game.returns)(states).astype(np.int64)


def sample_positions(game, n: int, seed: int, from_ply: int = 0) -> np.ndarray:
    """``n`` distinct live positions from games mixing random and perfect moves (see the module doc);
    with ``from_ply`` only positions at that ply or later, the moves before it random (the perfect
    player's first moves are out of reach on boards the solver cannot solve from the start)."""
    from agents.base import RandomAgent
    from agents.registry import make_agent

    rng = np.random.default_rng([seed, 11])
    perfect = make_agent("perfect", game, seed)
    rand = RandomAgent(game, seed=seed)
    seen: dict[bytes, np.ndarray] = {}
    games = 0
    while len(seen) < 4 * n and games < 20 * n + 100:
        share = RANDOM_SHARES[games % len(RANDOM_SHARES)]
        games += 1
        s = game.initial_states(1)
        while not game.terminal(s)[0]:
            early = bool(from_ply) and int(_plies(game, s)[0]) < from_ply
            if not early:
                seen.setdefault(s[0].tobytes(), s[0].copy())
            who = rand if early or rng.random() < share else perfect
            s = game.apply(s, who.act_batch(s, rng))
    pool = list(seen.values())
    pick = rng.permutation(len(pool))[:n]
    return np.stack([pool[i] for i in sorted(pick)]) if len(pick) else game.initial_states(0)


def label(game, states) -> tuple[np.ndarray, np.ndarray]:
    """(values (N, A) exact value of each move for the mover, very negative on illegal moves;
    legal masks (N, A))."""
    fn = move_values_fn(game)
    legal = game.legal_masks(states)
    vals = np.stack([fn(game, s) for s in states]) if len(states) else np.zeros((0, game.num_actions), np.int64)
    vals = np.where(legal, vals, np.iinfo(np.int64).min // 2)
    return vals, legal


def accuracy(game, states, values, legal, actions) -> dict:
    """The schema of :func:`metrics.accuracy`: share of value-keeping moves on critical positions,
    by ply and by side, and on all positions."""
    n = len(states)
    actions = np.asarray(actions, np.int64)
    if n and not legal[np.arange(n), actions].all():
        i = int(np.flatnonzero(~legal[np.arange(n), actions])[0])
        raise ValueError(f"illegal action {int(actions[i])} in position {states[i].tolist()}")
    best = values.max(axis=1) if n else np.zeros(0, np.int64)
    keeps = values[np.arange(n), actions] == best
    crit = (legal & (values < best[:, None])).any(axis=1)
    mover = game.to_play(states).astype(np.int64) if n else np.zeros(0, np.int64)
    ply = _plies(game, states)
    return metrics.keep_rates(keeps, crit, ply, mover)


def value_loss(game, states, values, actions) -> dict:
    """Points given away (best move's value - chosen move's, for the mover): ``margin_loss`` schema."""
    loss = values.max(axis=1) - values[np.arange(len(states)), np.asarray(actions, np.int64)]
    return metrics.loss_summary(loss, _plies(game, states))


def evaluate(args, log=print) -> dict:
    """The summary dict (the schema of the Highway evaluation where it applies)."""
    from agents.arena import play_match
    from agents.registry import get_game, make_agent
    from highway_env.evaluation.elo import elo_with_ci

    t0 = time.monotonic()
    game = get_game(args.game, args.game_options)
    scored = hasattr(game, "margins")  # move values are points (Jumping), not just win/draw/loss
    from tqdm import tqdm

    from_ply = args.label_from_ply
    states = sample_positions(game, args.positions, args.seed, from_ply)
    values, legal = label(game, states)
    start_value = int(move_values_fn(game)(game, game.initial_states(1)[0]).max()) if not from_ply else None
    agents = {}
    rr = list(args.agent) + (["perfect"] if args.rr_perfect else [])
    pairs_n = len(rr) * (len(rr) - 1) // 2 if args.rr_games else 0
    bar = tqdm(total=3 * len(args.agent) + pairs_n, desc=f"{args.game} evaluation", unit="step",
               disable=args.no_progress, file=sys.stderr)
    for k, spec in enumerate(args.agent):
        a: dict = {}
        agent = make_agent(spec, game, seed=args.seed)
        if len(states):
            acts = agent.act_batch(states, np.random.default_rng([args.seed, 21, k]))
            a["accuracy"] = accuracy(game, states, values, legal, acts)
            if scored:
                a["margin_loss"] = value_loss(game, states, values, acts)
        bar.update(1)
        for seat, key in ((0, "as_A_vs_perfect"), (1, "as_B_vs_perfect")):
            perfect = make_agent("perfect", game, seed=args.seed + 1)
            pair = (agent, perfect) if seat == 0 else (perfect, agent)
            m = play_games(game, *pair, args.games, [args.seed, 31, k, seat])
            a[key] = metrics.games_vs_perfect(m if seat == 0 else -m)
            bar.update(1)
        agents[spec] = a
    pairs, rr_out = [], {}
    if args.rr_games and len(rr) > 1:
        built = {s: make_agent(s, game, seed=args.seed + 2) for s in rr}
        for i, j in itertools.combinations(range(len(rr)), 2):
            r = play_match(built[rr[i]], built[rr[j]], game, args.rr_games, seed=args.seed * 1000 + 7 * i + j)
            rr_out[f"{rr[i]} vs {rr[j]}"] = metrics.wdl([1] * r.wins + [0] * r.draws + [-1] * r.losses)
            pairs.append((i, j, r.wins, r.draws, r.losses))
            bar.update(1)
    bar.close()
    anchor = "random" if "random" in rr else (rr[0] if rr else None)
    elo = elo_with_ci(rr, pairs, anchor=anchor, seed=args.seed) if pairs else {}
    for spec in args.agent:
        agents[spec]["elo"] = elo.get(spec)
    crit = int((legal & (values < values.max(axis=1)[:, None])).any(axis=1).sum()) if len(states) else 0
    return {
        "game": args.game, "title": type(game).title or game.name, "scored": scored, "board": game.describe(),
        "start_value": start_value,
        "config": {"agents": args.agent, "game_config": game.config(), "games": args.games, "rr_games": args.rr_games,
                   "positions": int(len(states)), "critical_positions": crit, "conversion": 0,
                   "seed": args.seed, "workers": 1, "name": args.name, "perfect_tiebreak": "random",
                   "label_from_ply": from_ply,
                   "random_shares": list(RANDOM_SHARES)},
        "agents": agents, "round_robin": rr_out, "elo": elo, "elo_anchor": anchor,
        "wall_seconds": round(time.monotonic() - t0, 1), "provenance": provenance(),
    }


def markdown(summary: dict, plots: list[str]) -> str:
    from highway_env.evaluation.report import document

    c = summary["config"]
    title, scored = summary["title"], summary["scored"]
    sv = summary["start_value"]
    val = "the exact future score difference" if scored else "win/draw/loss"
    if sv is None:
        outcome = "the value was not computed (positions from ply {} on only)".format(c.get("label_from_ply"))
    elif not sv:
        outcome = "perfect play is a draw"
    else:
        outcome = (f"with perfect play the {'first' if sv > 0 else 'second'} player ({'A' if sv > 0 else 'B'}) wins"
                   + (f" by {abs(sv)} point(s)" if scored else ""))
    return document(
        summary, f"{title} ({summary['board']}): evaluation against the exact solver: {c.get('name')}",
        f"{c['games']} games per side against the perfect player, {c['rr_games']} games per pair in "
        f"the round robin, {c['positions']} positions ({c['critical_positions']} critical). "
        f"From the start {outcome}. Wall time {summary.get('wall_seconds', 0):.0f} s.",
        ["- **perfect player**: the solver's player; it plays a move of the best exact value for the "
        f"mover ({val}), at random among ties.",
        "- **accuracy**: share of value-keeping moves (the move's exact value is the best the mover "
        "has) on *critical* positions, where some legal move has a worse value; acc A / acc B by side "
        "to move. Positions: distinct live positions from games mixing random and perfect moves "
        f"(share of random moves per game cycling through {c['random_shares']}), sampled uniformly "
        "and labelled by the solver" + (f"; only plies {c['label_from_ply']} and later (the moves before "
                                        "them random)." if c.get("label_from_ply") else "."),
        "- **margin lost** (scored games): mean points given away, best move's value - chosen move's, "
        "over all sampled positions; **margin-opt**: the share of those moves that give none away." if scored else
        f"- **margin lost**, **margin-opt**: not applicable ({title} has no score).",
        "- **as A / as B W/D/L**: games from the start against the perfect player (W/D/L from the "
        "agent's side). The best possible result against it is the game's value: a side that loses "
        "with perfect play loses every game whatever it does.",
        "- **conversion**, **acc v2**, **B held to 2**: Highway's measures, not measured for this game.",
        "- **Elo**: Bradley-Terry fit of the round robin (draw = half a win, one virtual draw per "
        f"pair), anchored at `{summary.get('elo_anchor')}` = 0, 95 % CI from 500 bootstrap resamples."],
        plots, "`summary.json` (everything), `agents.csv`, `accuracy_by_ply.csv`")
