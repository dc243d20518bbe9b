"""The demo plays a whole game between two agent specs and renders it."""

import numpy as np
from PIL import Image

from highway_env.demo import main


def test_demo_plays_a_full_game_and_saves_png(tmp_path, capsys):
    png = tmp_path / "game.png"
    assert main(["--a", "greedy", "--b", "random", "--seed", "3", "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert sum(line.startswith("move ") for line in out.splitlines()) == 16
    assert any(word in out for word in ("A wins", "B wins", "draw"))
    image = np.asarray(Image.open(png))
    assert image.ndim == 3 and image.shape[2] == 3


def test_demo_rejects_a_bad_spec(capsys):
    assert main(["--a", "nonsense:3"]) == 2
    assert "nonsense" in capsys.readouterr().err
