"""What a researcher's ``pip install`` of the wheel must give: run by an interpreter that has the
wheel installed, from a directory outside the checkout (tests/test_packaging.py, slow test).

    python tests/wheel_smoke.py SITE_PACKAGES

Exits non-zero on the first failure; prints one line per part that works. SITE_PACKAGES is where the
wheel was installed: ``highway_env`` and ``agents`` must be imported from there, not from a checkout.
"""

import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np

import agents
import highway_env


def check_imported_from(site: Path) -> None:
    for module in (highway_env, agents):
        where = Path(module.__file__).resolve()
        assert site in where.parents, f"{module.__name__} imported from {where}, not from {site}"
    print("imported from", site)


def play_aec(env, steps: int, seed: int = 0) -> int:
    """Masked random moves in a PettingZoo AEC env; the number of moves made."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    made = 0
    for agent in env.agent_iter(max_iter=steps):
        _, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        made += 1
    env.close()
    return made


def check_envs() -> None:
    import gymnasium

    from highway_env import blackpath_v0, highway_v0, jumping_v0

    for name, module in (("highway_v0", highway_v0), ("blackpath_v0", blackpath_v0), ("jumping_v0", jumping_v0)):
        assert play_aec(module.env(), 6) > 0, name
        print(name, "plays")
    for env_id in (highway_env.GYM_ENV_ID, highway_env.RUSH_HOUR_ENV_ID):
        env = gymnasium.make(env_id)
        obs, info = env.reset(seed=0)
        mask = info.get("action_mask")
        action = int(np.flatnonzero(mask)[0]) if mask is not None else env.action_space.sample()
        env.step(action)
        env.close()
        print(env_id, "steps")


def check_perfect_player() -> None:
    from highway_env.core import Board

    player = agents.make_agent("perfect", seed=0)
    late = Board((16, 3, 0, 9, 0, 12, 1, 0, 7, 0, 14, 5, 0, 2, 11, 0))
    for board in (Board(), late):
        action = player.act(board)
        assert board.is_legal(action), (board, action)
    for name in ("blackpath", "jumping"):
        game = agents.get_game(name)
        state = game.initial_states(1)[0]
        assert game.legal_masks(state[None])[0][agents.make_agent("perfect", game=game, seed=0).act(state)], name
    print("perfect players move: Highway on the empty and a late board, Black Path, Jumping")


def check_data() -> None:
    from highway_env.evaluation.position_set import V2_PATH, load_positions
    from highway_env.rushhour.game import load_cards
    from highway_env.solver.opening_book import load_book

    for path in (None, V2_PATH):
        assert len(load_positions(path).boards) > 0, path
    assert len(load_book(cache=False).entries) > 0
    assert len(load_cards()) == 40
    print("position sets v1 and v2, the opening book and the Rush Hour cards load")


def check_pretrained() -> None:
    for name in agents.pretrained_names():
        agent = agents.load_pretrained(name, simulations=2, seed=0)
        state = agent.game.initial_states(1)[0]
        assert agent.game.legal_masks(state[None])[0][agent.act(state)], name
    print("pretrained agents move:", ", ".join(agents.pretrained_names()))


def check_module_clis() -> None:
    for module in ("highway_env.solver", "highway_env.solver.book", "highway_env.evaluation.positions",
                   "highway_env.demo"):
        r = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and "usage" in r.stdout, (module, r.stderr)
    print("the package's command lines answer --help")


def check_play_server() -> None:
    script = shutil.which("highway-play")
    assert script, "the console script highway-play is not on PATH"
    r = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "--port" in r.stdout, r.stderr
    from highway_env.play.server import start_server

    server, _ = start_server(hint_seconds=0.5)
    try:
        for page in ("", "static/app.js", "static/style.css"):
            with urllib.request.urlopen(server.url + page, timeout=30) as reply:
                assert reply.status == 200 and reply.read(), page
        with urllib.request.urlopen(server.url + "api/opponents", timeout=30) as reply:
            assert json.loads(reply.read()), "no opponents"
        # the shipped network as the opponent, in a process of its own, moves first
        request = urllib.request.Request(server.url + "api/games", method="POST",
                                         data=json.dumps({"side": "B", "opponent": "az:shipped"}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            game = json.loads(reply.read())
        with urllib.request.urlopen(f"{server.url}api/games/{game['id']}?wait=30", timeout=60) as reply:
            game = json.loads(reply.read())
        assert len(game["history"]) == 1 and game["your_turn"], game
    finally:
        server.shutdown()
        server.server_close()
    print("highway-play --help works; the server serves its page and plays the shipped network")


def main() -> None:
    check_imported_from(Path(sys.argv[1]).resolve())
    check_envs()
    check_perfect_player()
    check_data()
    check_pretrained()
    check_module_clis()
    check_play_server()
    print("wheel smoke: all good")


if __name__ == "__main__":
    main()
