"""A comic page set with ground truth, drawn with Pillow (not quire).

Each page is 1200 x 1800: panels of gradient "art" with strokes and a
screentone patch, 3 to 6 balloons (ellipses, rounded rectangles, clouds;
white or tinted, black outlines) holding English lines in one of three
fonts (Comic Neue, DejaVu Sans, DejaVu Serif, all bold), a caption set on
the art, and a page number in the bottom margin. The last page holds
vertical Japanese in Noto Sans and Noto Serif CJK. Every page is the same on every run
(a fixed seed per page).

`make.py DIR [COUNT] [SEED]`: with a SEED, a held-out set that no
threshold was tuned on: other seeds, other faces (DejaVu Sans Mono Bold,
Comic Neue Bold Italic and Regular), sharp rectangles besides the three
shapes, every balloon with a tail (down, down-left, down-right or to a
side, its base open into the body), marks on the art that look like
text (rings, slashes, crosses), one panel a page under screentone
whole, and a caption set straight on the art in white with a black
outline.

Writes, into the directory given: page-NN.png, page-NN.text.png (the
glyph pixels, white on black), page-NN.blank.png (the page as it was
before its text was drawn: what `clean` should give back) and truth.json:
  {"pages": [{"name", "balloons": [{"box": [x, y, w, h] (the balloon),
   "text_box": [...], "text", "lang", "kind": "balloon" | "art"}],
   "page_number": [x, y, w, h]}]}
"""

import json
import math
import random
import sys
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

W, H = 1200, 1800
FONTS = [
    "/usr/share/fonts/opentype/comic-neue/ComicNeue-Bold.otf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf",
]
CJK = ["/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
       "/usr/share/fonts/opentype/noto/NotoSerifCJK-Bold.ttc"]
WORDS = (
    "WHERE DID THE STORM COME FROM WE NEVER SAW IT COMING THE HARBOR LIGHTS "
    "ARE OUT AGAIN TONIGHT KEEP THE ENGINE RUNNING UNTIL I GET BACK HOLD ON "
    "TIGHT THIS BRIDGE WILL NOT LAST LONG NOBODY KNOWS THE NAME OF THAT SHIP "
    "TELL ME WHAT YOU FOUND IN THE OLD LIBRARY LISTEN THE BELLS ARE RINGING "
    "FOLLOW THE RIVER NORTH AND WAIT FOR MY SIGNAL IT WAS HERE A MOMENT AGO"
).split()
HOLDOUT_FONTS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf",
    "/usr/share/fonts/opentype/comic-neue/ComicNeue-BoldItalic.otf",
    "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf",
]
# Set by main: the held-out set's seed, or None.
HOLDOUT = None
# The pixels under each piece of text, taken just before it is drawn
# (nothing drawn later overlaps it): (box, image).
UNDER = []


def keep_under(image, box):
    """Remember what `box` of `image` holds before text is drawn on it."""
    box = tuple(int(v) for v in box)
    UNDER.append((box, image.crop(box)))
JAPANESE = ["なぜここに", "いるのですか", "まってくれ", "すぐにもどる", "あのふねは", "どこへいく"]
TINTS = [(255, 255, 255), (255, 255, 255), (255, 247, 205), (222, 238, 255)]


def art(draw, rng, box):
    """A panel: a gradient with strokes and a screentone patch."""
    x0, y0, x1, y1 = box
    top = [rng.randint(90, 200) for _ in range(3)]
    bottom = [rng.randint(60, 180) for _ in range(3)]
    for y in range(y0, y1):
        t = (y - y0) / max(1, y1 - y0)
        colour = tuple(int(a + (b - a) * t) for a, b in zip(top, bottom))
        draw.line([(x0, y), (x1, y)], fill=colour)
    for _ in range(14):
        points = [(rng.randint(x0, x1), rng.randint(y0, y1)) for _ in range(3)]
        draw.line(points, fill=(30, 30, 30), width=rng.randint(2, 5))
    tx, ty = rng.randint(x0, x1 - 200), rng.randint(y0, y1 - 150)
    for y in range(ty, ty + 150, 7):
        for x in range(tx, tx + 200, 7):
            draw.ellipse([x, y, x + 2, y + 2], fill=(40, 40, 40))
    if HOLDOUT is not None and rng.random() < 0.3:
        # The whole panel under screentone.
        for y in range(y0 + 4, y1 - 4, 6):
            for x in range(x0 + 4 + (y // 6 % 2) * 3, x1 - 4, 6):
                draw.ellipse([x, y, x + 2, y + 2], fill=(35, 35, 35))
    if HOLDOUT is not None:
        # Marks a detector may take for letters: rings, slashes, crosses.
        for _ in range(6):
            mx, my = rng.randint(x0 + 20, x1 - 60), rng.randint(y0 + 20, y1 - 60)
            size = rng.randint(22, 44)
            kind = rng.choice(["ring", "slash", "cross"])
            if kind == "ring":
                draw.ellipse([mx, my, mx + size, my + size], outline=(20, 20, 20), width=4)
            elif kind == "slash":
                draw.line([(mx, my + size), (mx + size // 2, my)], fill=(20, 20, 20), width=4)
            else:
                draw.line([(mx, my), (mx + size, my + size)], fill=(20, 20, 20), width=4)
                draw.line([(mx + size, my), (mx, my + size)], fill=(20, 20, 20), width=4)
    draw.rectangle(box, outline=(0, 0, 0), width=6)


def place(rng, taken, xs, ys, box_of):
    """A random spot whose box keeps 30 px from every box taken: (x, y,
    box), the box then taken; None after 200 tries."""
    for _ in range(200):
        x, y = rng.randint(*xs), rng.randint(*ys)
        box = box_of(x, y)
        if all(box[2] + 30 < t[0] or t[2] + 30 < box[0] or box[3] + 30 < t[1] or t[3] + 30 < box[1]
               for t in taken):
            taken.append(box)
            return x, y, box
    return None


def lines_of(rng, words, font, width):
    """Words in lines no wider than width."""
    lines, line = [], []
    for word in words:
        trial = " ".join(line + [word])
        if line and font.getlength(trial) > width:
            lines.append(" ".join(line))
            line = [word]
        else:
            line.append(word)
    if line:
        lines.append(" ".join(line))
    return lines


def tail(rng, draw, box, fill):
    """A tail from the balloon's bottom (or a side) to a tip outside it,
    drawn before the body: the body's outline then closes over its base,
    and `open_tail` opens it again."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    side = rng.choice(["down", "down-left", "down-right", "left", "right"])
    if side in ("left", "right"):
        edge = x0 + 8 if side == "left" else x1 - 8
        base = [(edge, cy - 16), (edge, cy + 16)]
        tip = (edge - 55 if side == "left" else edge + 55, cy + 30)
    else:
        shift = {"down": 0, "down-left": -60, "down-right": 60}[side]
        base = [(cx - 18 + shift / 3, y1 - 8), (cx + 18 + shift / 3, y1 - 8)]
        tip = (cx + shift, y1 + 55)
    draw.polygon(base + [tip], fill=fill, outline=(0, 0, 0), width=4)
    return base, tip


def open_tail(draw, base, tip, box, fill):
    """The body's outline across the tail's base painted over."""
    x0, y0, x1, y1 = box
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    inner = [(bx + (cx - bx) * 0.25, by + (cy - by) * 0.25) for bx, by in base]
    near = (tip[0] + (base[0][0] + base[1][0]) / 2) / 2, (tip[1] + (base[0][1] + base[1][1]) / 2) / 2
    draw.polygon([inner[0], inner[1], near], fill=fill)


def shape(draw, masks, kind, box, fill):
    """A balloon of a kind, outline 4 px; also drawn into masks (255)."""
    x0, y0, x1, y1 = box
    for target, colour, outline in [(draw, fill, (0, 0, 0))] + [(m, 255, 255) for m in masks]:
        if kind == "rect":
            target.rectangle(box, fill=colour, outline=outline, width=4)
        elif kind == "ellipse":
            target.ellipse(box, fill=colour, outline=outline, width=4)
        elif kind == "rounded":
            target.rounded_rectangle(box, radius=40, fill=colour, outline=outline, width=4)
        else:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            rx, ry = (x1 - x0) / 2 - 22, (y1 - y0) / 2 - 22
            puffs = [(cx + rx * math.cos(a), cy + ry * math.sin(a)) for a in
                     [i * 2 * math.pi / 12 for i in range(12)]]
            # Black first (the puffs and the body a little larger), then the
            # fill: what stays black is one closed outline.
            for px, py in puffs:
                target.ellipse([px - 26, py - 26, px + 26, py + 26], fill=outline)
            target.ellipse([cx - rx - 4, cy - ry - 4, cx + rx + 4, cy + ry + 4], fill=outline)
            for px, py in puffs:
                target.ellipse([px - 22, py - 22, px + 22, py + 22], fill=colour)
            target.ellipse([cx - rx, cy - ry, cx + rx, cy + ry], fill=colour)


def english(rng, image, draw, text_mask, taken):
    """One balloon, placed where nothing is yet; its truth, or None."""
    font = ImageFont.truetype(rng.choice(HOLDOUT_FONTS if HOLDOUT is not None else FONTS), rng.randint(30, 38))
    words = rng.sample(WORDS, rng.randint(4, 9))
    lines = lines_of(rng, words, font, rng.randint(240, 360))
    step = int(font.size * 1.25)
    text_w = max(int(font.getlength(line)) for line in lines)
    text_h = step * len(lines)
    kind = rng.choice(["ellipse", "rounded", "cloud"] + (["rect"] if HOLDOUT is not None else []))
    pad_x, pad_y = (0.32, 0.42) if kind not in ("rounded", "rect") else (0.12, 0.25)
    bw, bh = int(text_w * (1 + 2 * pad_x)) + 40, int(text_h * (1 + 2 * pad_y)) + 40
    # Room for a tail around a held-out balloon.
    margin = 70 if HOLDOUT is not None else 0
    placed = place(rng, taken, (60 + margin, W - 60 - margin - bw), (60, H - 200 - margin - bh),
                   lambda x, y: (x - margin, y, x + bw + margin, y + bh + margin))
    if not placed:
        return None
    x, y, _ = placed
    box = (x, y, x + bw, y + bh)
    fill = rng.choice(TINTS)
    if HOLDOUT is not None:
        base, tip = tail(rng, draw, box, fill)
    shape(draw, [], kind, box, fill)
    if HOLDOUT is not None:
        open_tail(draw, base, tip, box, fill)
    tx0 = x + (bw - text_w) // 2
    ty0 = y + (bh - text_h) // 2
    mask_draw = ImageDraw.Draw(text_mask)
    keep_under(image, (tx0 - 6, ty0 - 6, tx0 + text_w + 6, ty0 + text_h + 6))
    for i, line in enumerate(lines):
        lx = x + (bw - font.getlength(line)) / 2
        draw.text((lx, ty0 + i * step), line, font=font, fill=(0, 0, 0))
        mask_draw.text((lx, ty0 + i * step), line, font=font, fill=255)
    return {"box": [x, y, bw, bh], "text_box": [tx0, ty0, text_w, text_h],
            "text": " ".join(lines), "lang": "en", "kind": "balloon"}


def caption(rng, image, draw, text_mask, taken):
    """A caption: dark text in a light box on the art; in the held-out
    set, white text with a black outline straight on the art."""
    font = ImageFont.truetype(FONTS[1], 34)
    words = rng.sample(WORDS, 3)
    line = " ".join(words)
    w = int(font.getlength(line))
    placed = place(rng, taken, (80, W - 80 - w), (80, H - 260), lambda x, y: (x - 10, y - 10, x + w + 10, y + 54))
    if not placed:
        return None
    x, y, box = placed
    if HOLDOUT is not None:
        keep_under(image, (x - 8, y - 8, x + w + 8, y + 56))
        draw.text((x, y), line, font=font, fill=(255, 255, 255), stroke_width=3, stroke_fill=(0, 0, 0))
        ImageDraw.Draw(text_mask).text((x, y), line, font=font, fill=255, stroke_width=3, stroke_fill=255)
        return {"box": [box[0], box[1], box[2] - box[0], box[3] - box[1]],
                "text_box": [x, y, w, 44], "text": line, "lang": "en", "kind": "art"}
    draw.rectangle(box, fill=(250, 250, 250))
    keep_under(image, box)
    draw.text((x, y), line, font=font, fill=(0, 0, 0))
    ImageDraw.Draw(text_mask).text((x, y), line, font=font, fill=255)
    return {"box": [box[0], box[1], box[2] - box[0], box[3] - box[1]],
            "text_box": [x, y, w, 44], "text": line, "lang": "en", "kind": "art"}


def vertical(rng, image, draw, text_mask, taken):
    """A white ellipse with columns of Japanese, read right to left, in
    Noto Sans and Noto Serif CJK JP by turns (each collection's first
    face)."""
    font = ImageFont.truetype(CJK[len(taken) % 2], 40)
    columns = rng.sample(JAPANESE, 2)
    step = 52
    col_h = max(len(c) for c in columns) * step
    text_w = step * len(columns)
    bw, bh = text_w + 170, col_h + 200
    placed = place(rng, taken, (60, W - 60 - bw), (60, H - 200 - bh), lambda x, y: (x, y, x + bw, y + bh))
    if not placed:
        return None
    x, y, box = placed
    shape(draw, [], "ellipse", box, (255, 255, 255))
    tx0, ty0 = x + (bw - text_w) // 2, y + (bh - col_h) // 2
    mask_draw = ImageDraw.Draw(text_mask)
    keep_under(image, (tx0 - 6, ty0 - 6, tx0 + text_w + 6, ty0 + col_h + 6))
    for c, column in enumerate(columns):
        cx = tx0 + text_w - (c + 1) * step
        for i, ch in enumerate(column):
            draw.text((cx, ty0 + i * step), ch, font=font, fill=(0, 0, 0))
            mask_draw.text((cx, ty0 + i * step), ch, font=font, fill=255)
    return {"box": [x, y, bw, bh], "text_box": [tx0, ty0, text_w, col_h],
            "text": "".join(columns), "lang": "ja", "kind": "balloon"}


def page(number, japanese, out):
    rng = random.Random(1000 + number if HOLDOUT is None else HOLDOUT * 7919 + number)
    image = Image.new("RGB", (W, H), (255, 255, 255))
    text_mask = Image.new("L", (W, H), 0)
    draw = ImageDraw.Draw(image)
    gutter = 30
    rows = [(60, 620), (620 + gutter, 1180), (1180 + gutter, 1700)]
    for top, bottom in rows:
        split = rng.randint(450, 750)
        art(draw, rng, (60, top, split, bottom))
        art(draw, rng, (split + gutter, top, W - 60, bottom))
    taken, balloons = [], []
    count = rng.randint(3, 6)
    for _ in range(count):
        made = vertical(rng, image, draw, text_mask, taken) if japanese else english(rng, image, draw, text_mask, taken)
        if made:
            balloons.append(made)
    if not japanese:
        made = caption(rng, image, draw, text_mask, taken)
        if made:
            balloons.append(made)
    number_font = ImageFont.truetype(FONTS[1], 28)
    label = str(number + 1)
    nx = W // 2 - int(number_font.getlength(label)) // 2
    keep_under(image, (nx - 6, H - 76, nx + 60, H - 30))
    draw.text((nx, H - 70), label, font=number_font, fill=(0, 0, 0))
    name = f"page-{number + 1:02}"
    image.save(out / f"{name}.png")
    blank = image.copy()
    for box, under in UNDER:
        blank.paste(under, box[:2])
    UNDER.clear()
    blank.save(out / f"{name}.blank.png")
    text_mask.save(out / f"{name}.text.png")
    return {"name": name, "balloons": balloons, "page_number": [nx, H - 70, 40, 34]}


def main():
    global HOLDOUT
    out = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    HOLDOUT = int(sys.argv[3]) if len(sys.argv) > 3 else None
    out.mkdir(parents=True, exist_ok=True)
    pages = [page(n, n == count - 1, out) for n in range(count)]
    (out / "truth.json").write_text(json.dumps({"pages": pages}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
