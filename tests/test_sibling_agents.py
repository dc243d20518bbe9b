"""The shipped sibling-game agents: each loads small, rebuilds its board and plays legal moves
against the perfect player (full games; the winning seat wins)."""

import numpy as np
import pytest

import agents
from agents.checkpoint import load_checkpoint
from agents.registry import make_agent
from highway_env.evaluation.siblings import play_games

#: name -> (game, board options, the seat that wins with perfect play: 0 = first player)
SHIPPED = {"blackpath_4x4_az": ("blackpath", {"rows": 4, "cols": 4, "start": "A1:top"}, 0),
           "blackpath_5x5_az": ("blackpath", {"rows": 5, "cols": 5, "start": "A1:top"}, 1),
           "jumping_n4_az": ("jumping", {"n": 4}, 1)}


def test_every_sibling_name_is_described_here():
    assert set(agents.SIBLINGS) == set(SHIPPED)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_sibling_agent_rebuilds_its_board_and_plays_legal_games(name):
    game_name, board, winning_seat = SHIPPED[name]
    path = agents.ZOO[name]
    assert path.stat().st_size < 2_000_000
    data = load_checkpoint(path)
    assert "optimizer" not in data and data["game"] == game_name and data["game_config"] == board
    agent = agents.load_pretrained(name, seed=0)  # its play search, as shipped
    assert agent.game.name == game_name and agent.game.config() == board
    perfect = make_agent("perfect", agent.game, seed=1)
    # arena.play_out applies every move through Game.apply, which raises on an illegal one
    pair = (agent, perfect) if winning_seat == 0 else (perfect, agent)
    margins = play_games(agent.game, *pair, 2, [0, 1])
    assert len(margins) == 2 and np.all(margins != 0)
    assert np.all((margins > 0) == (winning_seat == 0))  # the agent wins from its winning seat
