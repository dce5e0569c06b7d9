"""Small inline SVG charts for the notebook views (``bankfeed._views``), drawn by hand so that
no plotting library is needed (docs/notebooks.md).

Every text that reaches the SVG (labels, titles, legends) is escaped, attributes included, since
a label is data the service sent. Text and axes are drawn in ``currentColor``, so that a chart
reads on a light and a dark notebook theme alike; bars and lines use mid-tone colours that show
on both. The number of bars and of points per line is bounded by the caller and by
:func:`downsample`, so a chart stays small whatever the size of the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

__all__ = ["PALETTE", "bar_chart", "downsample", "line_chart"]

#: Mid-tone colours, readable on white and on a dark background (Tableau 10's first eight).
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7")

_FONT = 'font-family="sans-serif" font-size="11" fill="currentColor"'


def _text(value: str, limit: int = 28) -> str:
    """A label cut to ``limit`` characters, escaped for an SVG text node or attribute."""
    if len(value) > limit:
        value = value[: limit - 1] + "\u2026"
    return escape(value, quote=True)


def _numbers(values: Sequence[float]) -> Callable[[float], str]:
    """How a chart writes its numbers: in one unit for all (``k``, ``M`` or plain, as the largest
    needs), so that the bars and the axis of one chart read alike."""
    top = max((abs(v) for v in values), default=0.0)
    if top >= 1_000_000:
        return lambda v: f"{v / 1_000_000:,.2f}M"
    if top >= 10_000:
        return lambda v: f"{v / 1_000:,.1f}k"
    return lambda v: f"{v:,.2f}"


def bar_chart(labels: Sequence[str], values: Sequence[float], *, title: str, width: int = 420) -> str:
    """Horizontal bars, one per label, with the value at the end of each; negative values go left
    of a zero line. ``labels`` and ``values`` have the same length (the caller bounds it)."""
    row, label_width, value_width, top = 18, 150, 64, 22
    height = top + row * len(values) + 6
    low, high = min(0.0, *values) if values else 0.0, max(0.0, *values) if values else 0.0
    span = (high - low) or 1.0
    plot = width - label_width - value_width
    zero = label_width + plot * (-low / span)
    number = _numbers(values)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_text(title, 80)}" style="max-width:100%">',
        f'<text x="0" y="14" {_FONT} font-weight="bold">{_text(title, 80)}</text>',
    ]
    for index, (label, value) in enumerate(zip(labels, values, strict=True)):
        y = top + index * row
        x = zero + min(0.0, value) * plot / span
        length = abs(value) * plot / span
        colour = PALETTE[0] if value >= 0 else PALETTE[2]
        parts.append(
            f'<text x="{label_width - 6}" y="{y + 12}" text-anchor="end" {_FONT}>'
            f"<title>{_text(label, 200)}</title>{_text(label, 24)}</text>"
            f'<rect x="{x:.1f}" y="{y + 2}" width="{max(length, 1):.1f}" height="{row - 5}" fill="{colour}"/>'
            f'<text x="{width - value_width + 4}" y="{y + 12}" {_FONT}>{escape(number(value))}</text>'
        )
    parts.append(
        f'<line x1="{zero:.1f}" y1="{top}" x2="{zero:.1f}" y2="{height - 4}" stroke="currentColor" '
        'stroke-opacity="0.5"/></svg>'
    )
    return "".join(parts)


def downsample(points: Sequence[tuple[float, float]], limit: int) -> list[tuple[float, float]]:
    """At most ``limit`` of ``points`` (``limit`` >= 2), evenly spread, the first and the last kept."""
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_labels: tuple[str, str],
    width: int = 420,
    height: int = 180,
) -> str:
    """One line per ``(name, [(x, y), ...])`` (points sorted by x; the caller bounds their number),
    a legend below, the y range at the left and ``x_labels`` (first, last) under the x axis."""
    left, right, top, bottom = 64, 10, 22, 22
    legend_rows = len(series)
    total = height + 16 * legend_rows
    xs = [x for _, points in series for x, _ in points]
    ys = [y for _, points in series for _, y in points]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    y0, y1 = (min(ys), max(ys)) if ys else (0.0, 1.0)
    x_span, y_span = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    number = _numbers(ys)

    def xy(x: float, y: float) -> tuple[float, float]:
        return left + (x - x0) * plot_w / x_span, top + plot_h - (y - y0) * plot_h / y_span

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" '
        f'viewBox="0 0 {width} {total}" role="img" aria-label="{_text(title, 80)}" style="max-width:100%">',
        f'<text x="0" y="14" {_FONT} font-weight="bold">{_text(title, 80)}</text>',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="currentColor" '
        'stroke-opacity="0.3"/>',
        f'<text x="{left - 4}" y="{top + 10}" text-anchor="end" {_FONT}>{escape(number(y1))}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" {_FONT}>{escape(number(y0))}</text>',
        f'<text x="{left}" y="{height - 6}" {_FONT}>{_text(x_labels[0])}</text>',
        f'<text x="{width - right}" y="{height - 6}" text-anchor="end" {_FONT}>{_text(x_labels[1])}</text>',
    ]
    if y0 < 0 < y1:
        _, zero = xy(x0, 0.0)
        parts.append(
            f'<line x1="{left}" y1="{zero:.1f}" x2="{left + plot_w}" y2="{zero:.1f}" stroke="currentColor" '
            'stroke-opacity="0.4" stroke-dasharray="3 3"/>'
        )
    for index, (name, points) in enumerate(series):
        colour = PALETTE[index % len(PALETTE)]
        drawn = [xy(x, y) for x, y in points]
        if len(drawn) == 1:
            parts.append(f'<circle cx="{drawn[0][0]:.1f}" cy="{drawn[0][1]:.1f}" r="2.5" fill="{colour}"/>')
        elif drawn:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in drawn)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        y = height + 16 * index + 10
        parts.append(
            f'<rect x="{left}" y="{y - 8}" width="12" height="8" fill="{colour}"/>'
            f'<text x="{left + 18}" y="{y}" {_FONT}>{_text(name, 60)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
