"""Drawing a Highway board, for every env's ``render()``: text (``ansi``) and image (``rgb_array``).

On a full board one cheapest path of each player is shown (text: ``[n]`` A, ``<n>`` B, ``{n}``
both; image: a red and a blue polyline, offset a little so shared segments stay visible); on a
partial board no path is decided yet, so the side to move and the bounds are shown instead.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from highway_env.core import CELLS, PLAYER_NAMES, SIZE, VERDICTS, Board, HighwayError

RENDER_MODES = ("human", "ansi", "rgb_array")

# the palette of Highway's images, shared by Jumping's
A_COLOUR = (214, 48, 49)  # red
B_COLOUR = (9, 98, 204)  # blue
BACKGROUND = (250, 248, 240)
GRID = (60, 60, 60)
EMPTY = (228, 226, 218)
TEXT = (20, 20, 20)


def status_line(board: Board) -> str:
    """One line: whose turn and the bounds, or the result of a full board."""
    if board.is_terminal():
        out = board.outcome()
        rel = {1: "<", 0: "=", -1: ">"}[out.value]
        return f"{VERDICTS[out.value]}: min A {out.min_a} {rel} min B {out.min_b} (margin {out.margin:+d})"
    b = board.bounds()
    return (f"ply {board.ply}/{CELLS}, player_{board.to_move} ({PLAYER_NAMES[board.to_move]}) to move; "
            f"min A in [{b.min_a[0]}, {b.min_a[1]}], min B in [{b.min_b[0]}, {b.min_b[1]}]")


def _caption(board: Board) -> str:
    """A short status for the image."""
    if board.is_terminal():
        out = board.outcome()
        return f"{VERDICTS[out.value]}: A {out.min_a}, B {out.min_b}"
    b = board.bounds()
    return f"{PLAYER_NAMES[board.to_move]} to move; A [{b.min_a[0]},{b.min_a[1]}] B [{b.min_b[0]},{b.min_b[1]}]"


def board_to_ansi(board: Board) -> str:
    """The board as text; on a full board one cheapest path of each player is marked."""
    cells = board.cells
    out = board.outcome() if board.is_terminal() else None
    a_path = frozenset(out.a_paths[0] if out is not None else ())
    b_path = frozenset(out.b_paths[0] if out is not None else ())
    # the brackets around a cell by (on A's path, on B's path)
    marks = {(True, True): "{}", (True, False): "[]", (False, True): "<>", (False, False): "  "}
    lines = []
    for r in range(SIZE):
        fields = []
        for i in range(r * SIZE, (r + 1) * SIZE):
            left, right = marks[i in a_path, i in b_path]
            fields.append(left + (f"{cells[i]:>2}" if cells[i] else " .") + right)
        lines.append(" ".join(fields))
    lines.append(status_line(board))
    if out is not None:
        ties = ""
        if len(out.a_paths) > 1 or len(out.b_paths) > 1:
            ties = f" ({len(out.a_paths)} cheapest A-paths, {len(out.b_paths)} cheapest B-paths; one of each shown)"
        lines.append(f"[n] cheapest A-path, <n> cheapest B-path, {{n}} on both{ties}")
    return "\n".join(lines)


@lru_cache(maxsize=8)
def font(size: int):
    """Pillow's default font at ``size`` px."""
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def board_to_rgb(board: Board, cell_px: int = 96) -> np.ndarray:
    """The board as an ``(H, W, 3)`` uint8 image; paths drawn on a full board only."""
    from PIL import Image, ImageDraw

    if cell_px < 16:
        raise HighwayError(f"cell_px must be at least 16, got {cell_px}")
    margin = cell_px // 4
    caption = cell_px // 2
    side = SIZE * cell_px
    width, height = side + 2 * margin, side + 2 * margin + caption
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    number_font = font(int(cell_px * 0.42))
    small_font = font(max(10, cell_px // 7))

    def centre(cell: int) -> tuple[float, float]:
        r, c = divmod(cell, SIZE)
        return margin + (c + 0.5) * cell_px, margin + (r + 0.5) * cell_px

    for cell, v in enumerate(board.cells):
        r, c = divmod(cell, SIZE)
        x0, y0 = margin + c * cell_px, margin + r * cell_px
        draw.rectangle([x0, y0, x0 + cell_px, y0 + cell_px], fill=BACKGROUND if v else EMPTY,
                       outline=GRID, width=2)

    if board.is_terminal():
        out = board.outcome()
        off = max(2, cell_px // 16)
        width_px = max(3, cell_px // 14)
        for path, colour, d in ((out.a_paths[0], A_COLOUR, -off), (out.b_paths[0], B_COLOUR, off)):
            pts = [(x + d, y + d) for x, y in (centre(i) for i in path)]
            draw.line(pts, fill=colour, width=width_px, joint="curve")
            for x, y in (pts[0], pts[-1]):  # a dot at each end, of radius the line width
                draw.ellipse([x - width_px, y - width_px, x + width_px, y + width_px], fill=colour)

    for cell, v in enumerate(board.cells):
        if v:
            x, y = centre(cell)
            draw.text((x, y), str(v), fill=TEXT, font=number_font, anchor="mm",
                      stroke_width=max(1, cell_px // 24), stroke_fill=BACKGROUND)

    # corner labels: where each player's paths start and end
    near, far_x, far_y = margin // 2, width - margin // 2, margin + side + margin // 2
    for xy, label, colour in (((near, near), "A", A_COLOUR), ((far_x, far_y), "A", A_COLOUR),
                              ((near, far_y), "B", B_COLOUR), ((far_x, near), "B", B_COLOUR)):
        draw.text(xy, label, fill=colour, font=small_font, anchor="mm")
    draw.text((width / 2, side + 2 * margin + caption / 2), _caption(board), fill=TEXT,
              font=small_font, anchor="mm")
    return np.asarray(img, dtype=np.uint8).copy()
