"""Gymnasium's ``RecordVideo`` on the Gymnasium envs with ``render_mode="rgb_array"``: one game makes
one mp4 holding the frames ``render()`` gives (the first position, then one after each move).

RecordVideo writes with moviepy (in the ``test`` extra); without it these tests skip, except under
CI=true, where that is a failure."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import highway_env  # noqa: F401  (registers the Gymnasium id)
from optional_parts import require_modules

ENV_ID = "highway_env/Highway-v0"
MOVES = 8  # the agent's moves in a game; the opponent's replies happen inside its steps


def require_moviepy() -> None:
    require_modules("RecordVideo", "moviepy", ("moviepy", "imageio_ffmpeg"), 'pip install -e ".[test]"')


def mp4_frames(path) -> tuple[list[np.ndarray], float]:
    """The decoded RGB frames of the mp4 at ``path`` and its frame rate."""
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    width, height = meta["size"]
    return [np.frombuffer(f, np.uint8).reshape(height, width, 3) for f in reader], meta["fps"]


def play_one_game(env, seed: int) -> None:
    """One game of random legal moves, seeded."""
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        done = terminated or truncated


def test_record_video_writes_one_game_with_every_rendered_frame(tmp_path):
    require_moviepy()
    from gymnasium.wrappers import RecordVideo, RenderCollection

    videos = tmp_path / "videos"  # a folder RecordVideo makes (it warns about one that exists)
    recorded = RecordVideo(gymnasium.make(ENV_ID, render_mode="rgb_array"), str(videos), name_prefix="highway",
                           episode_trigger=lambda episode: True)
    play_one_game(recorded, seed=3)
    recorded.close()
    collected = RenderCollection(gymnasium.make(ENV_ID, render_mode="rgb_array"))
    play_one_game(collected, seed=3)
    want = collected.render()  # the same game's frames, through Gymnasium's other frame wrapper

    assert [p.name for p in videos.iterdir()] == ["highway-episode-0.mp4"]
    frames, fps = mp4_frames(videos / "highway-episode-0.mp4")
    assert len(frames) == len(want) == 1 + MOVES
    assert fps == collected.metadata["render_fps"]
    assert {got.shape for got in frames} == {frame.shape for frame in want}
    # each frame is its own position's picture, up to the video's compression (about 1.3 grey levels
    # from it on average, 3.5 or more from the next position's)
    distances = np.array([[np.abs(got.astype(int) - frame).mean() for frame in want] for got in frames])
    assert distances.argmin(axis=1).tolist() == list(range(len(want)))
    assert distances.diagonal().max() < 3


def test_vector_record_video_writes_the_first_game_of_the_native_vector_env(tmp_path):
    """Gymnasium's vector ``RecordVideo`` over ``gymnasium.make_vec`` (our native vector env) tiles
    the games' frames; one batch of games makes one video of 1 + MOVES frames."""
    require_moviepy()
    from gymnasium.wrappers.vector import RecordVideo

    videos = tmp_path / "videos"
    envs = RecordVideo(gymnasium.make_vec(ENV_ID, num_envs=4, render_mode="rgb_array"), str(videos),
                       name_prefix="highway", episode_trigger=lambda episode: episode == 0)
    obs, _ = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(MOVES):
        actions = [int(rng.choice(np.flatnonzero(mask))) for mask in obs["action_mask"]]
        obs, _, terminated, *_ = envs.step(np.array(actions))
    assert terminated.all()
    envs.step(np.zeros(4, np.int64))  # the autoreset step: it ends the recording and starts none
    envs.close()
    assert [p.name for p in videos.iterdir()] == ["highway-episode-0.mp4"]
    frames, _ = mp4_frames(videos / "highway-episode-0.mp4")
    assert len(frames) == 1 + MOVES
    one = gymnasium.make(ENV_ID, render_mode="rgb_array")
    one.reset(seed=0)
    height, width, _ = one.render().shape
    assert frames[0].shape == (2 * height, 2 * width, 3)  # the 4 games tiled 2 x 2
