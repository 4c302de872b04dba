"""Make a figure's SVG safe to inline: an allow-list of inert elements and attributes, no external
references, ids unique per figure.

Summaries carry figures as SVG text (matplotlib's output), written by workloads from data a
model may have shaped. Inlined as they are they could run script or fetch from the network, and
two matplotlib figures reuse the same element ids (clip paths, glyphs), so one figure's
``url(#p1)`` could resolve into another's. Each figure is parsed as XML and rebuilt from an
allow-list: anything not on it is dropped, element and attribute names are compared
lower-cased (the HTML parser that reads the inlined figure folds their case, so ``<Script>`` or
``HREF=`` is the same name to it), and only SVG's own namespace (plus ``xlink:href``) is kept.
Inline raster images (``data:image/png;base64,...``, as matplotlib's imshow writes them) stay;
every other link that is not a fragment (``#id``) is dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

# Drawing elements only: no script, foreignObject, animation (SMIL can set an href after
# sanitising), a, iframe, metadata... The values are SVG's spelling, used on output.
_ELEMENTS = {name.lower(): name for name in (
    "svg", "g", "defs", "title", "desc", "style", "path", "rect", "circle", "ellipse", "line", "polyline",
    "polygon", "text", "tspan", "use", "image", "clipPath", "mask", "pattern", "marker", "symbol",
    "linearGradient", "radialGradient", "stop")}
_ATTRIBUTES = {name.lower(): name for name in (
    "id", "class", "style", "transform", "version", "viewBox", "preserveAspectRatio", "width", "height",
    "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "dx", "dy", "fx", "fy", "d", "points",
    "pathLength", "rotate", "textLength", "lengthAdjust", "fill", "fill-opacity", "fill-rule", "stroke",
    "stroke-width", "stroke-opacity", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit",
    "stroke-dasharray", "stroke-dashoffset", "opacity", "color", "clip-path", "clip-rule", "clipPathUnits",
    "mask", "maskUnits", "maskContentUnits", "patternUnits", "patternContentUnits", "patternTransform",
    "gradientUnits", "gradientTransform", "spreadMethod", "offset", "stop-color", "stop-opacity",
    "markerWidth", "markerHeight", "markerUnits", "refX", "refY", "orient", "marker-start", "marker-mid",
    "marker-end", "font-family", "font-size", "font-style", "font-weight", "font-variant", "text-anchor",
    "dominant-baseline", "alignment-baseline", "baseline-shift", "letter-spacing", "word-spacing",
    "text-decoration", "writing-mode", "visibility", "display", "overflow", "vector-effect",
    "shape-rendering", "text-rendering", "image-rendering", "color-interpolation", "xml:space", "type",
    "media", "href")}
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_XLINK_HREF = f"{{{XLINK_NS}}}href"
_INLINE_RASTER = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$", re.IGNORECASE)
_URL_REF = re.compile(r"url\(\s*(['\"]?)#([^)'\"]+)\1\s*\)", re.IGNORECASE)
# CSS that could fetch or run something: a url() not to a fragment, @import, legacy expression()
_ACTIVE_CSS = re.compile(r"url\(\s*['\"]?(?!#)[^)]*\)|@import|expression\s*\(|javascript:|behavior\s*:",
                         re.IGNORECASE)


class InvalidSvg(ValueError):
    """The figure is not an SVG document the report can show."""


def _split(name: str) -> tuple[str | None, str]:
    """(namespace, local name) of an ElementTree tag or attribute name."""
    if name.startswith("{"):
        ns, _, local = name[1:].partition("}")
        return ns, local
    return None, name


def _element(tag: object) -> str | None:
    """The SVG spelling of an allowed element, or None (comments, other namespaces, the rest)."""
    if not isinstance(tag, str):
        return None
    ns, local = _split(tag)
    if ns not in (None, SVG_NS):
        return None
    return _ELEMENTS.get(local.lower())


def _attribute(name: str) -> str | None:
    """The output name of an allowed attribute, or None."""
    ns, local = _split(name)
    if ns == XLINK_NS and local.lower() == "href":
        return _XLINK_HREF
    if ns == "http://www.w3.org/XML/1998/namespace" and local.lower() == "space":
        return _XML_SPACE
    if ns is not None:
        return None
    allowed = _ATTRIBUTES.get(local.lower())
    return None if allowed in (None, "xml:space") else allowed


def sanitize_svg(text: str, id_prefix: str) -> str:
    """Return ``text`` as a self-contained, inert SVG element with every id prefixed."""
    start = text.find("<svg")
    if start < 0:
        raise InvalidSvg("no <svg> element")
    try:
        root = ET.fromstring(text[start:])
    except ET.ParseError as exc:
        raise InvalidSvg(f"not well-formed XML ({exc})") from exc
    if _element(root.tag) != "svg":
        raise InvalidSvg(f"root element is <{_split(str(root.tag))[1]}>, not <svg>")
    ids = {node.get("id") for node in root.iter() if node.get("id")}

    def rename(ref: str) -> str:
        return f"{id_prefix}-{ref}" if ref in ids else ref

    def inert_css(value: str) -> str:
        return _ACTIVE_CSS.sub("none", _URL_REF.sub(lambda m: f"url(#{rename(m.group(2))})", value))

    return ET.tostring(_clean(root, rename, inert_css), encoding="unicode")


def _clean(node: ET.Element, rename, inert_css) -> ET.Element:  # noqa: ANN001 - two local helpers
    """A copy of an allowed ``node``: allowed attributes with safe values, allowed children."""
    out = ET.Element(f"{{{SVG_NS}}}{_element(node.tag)}")
    for name, value in node.attrib.items():
        allowed = _attribute(name)
        if allowed is None or allowed in out.attrib:
            continue
        if allowed in ("href", _XLINK_HREF):
            if value.startswith("#"):
                out.set(allowed, "#" + rename(value[1:]))
            elif _INLINE_RASTER.match(value) and _element(node.tag) == "image":
                out.set(allowed, value)
            continue  # anything else could fetch or run something
        if allowed == "id":
            value = rename(value)
        elif allowed == "type" and value.strip().lower() != "text/css":
            continue
        out.set(allowed, inert_css(value))
    if out.tag == f"{{{SVG_NS}}}style":
        out.text = inert_css("".join(node.itertext()))
        return out
    out.text = node.text
    for child in node:
        if _element(child.tag) is not None:
            cleaned = _clean(child, rename, inert_css)
            cleaned.tail = child.tail
            out.append(cleaned)
        elif child.tail:  # the dropped element's trailing text stays where it was
            if len(out):
                out[-1].tail = (out[-1].tail or "") + child.tail
            else:
                out.text = (out.text or "") + child.tail
    return out
