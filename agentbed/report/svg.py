"""Make a figure's SVG safe to inline: no scripts, no external references, ids unique per figure.

Inline raster images (``data:image/png;base64,...``, as matplotlib's imshow writes them) stay.

Summaries carry figures as SVG text (matplotlib's output). Inlined as-is they could run
script or fetch from the network, and two matplotlib figures reuse the same element ids
(clip paths, glyphs), so one figure's ``url(#p1)`` could resolve into another's. Each figure
is parsed, stripped of active content and external links, and its ids get a prefix.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

# Active content, and SMIL animation (it can set an href to a script URL after sanitising).
_FORBIDDEN_TAGS = {"script", "foreignObject", "iframe", "object", "embed", "audio", "video", "metadata",
                   "set", "animate", "animateMotion", "animateTransform", "discard", "handler", "listener"}
_HREF_ATTRS = {"href", f"{{{XLINK_NS}}}href"}
# Raster images embedded by matplotlib (imshow) are kept: they are inline data, not a fetch.
_INLINE_RASTER = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*$")
_URL_REF = re.compile(r"url\(\s*(['\"]?)#([^)'\"]+)\1\s*\)")
_EXTERNAL_URL = re.compile(r"url\(\s*['\"]?(?!#)[^)]*\)|@import", re.IGNORECASE)


class InvalidSvg(ValueError):
    """The figure is not an SVG document the report can show."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def sanitize_svg(text: str, id_prefix: str) -> str:
    """Return ``text`` as a self-contained, inert SVG element with every id prefixed."""
    start = text.find("<svg")
    if start < 0:
        raise InvalidSvg("no <svg> element")
    try:
        root = ET.fromstring(text[start:])
    except ET.ParseError as exc:
        raise InvalidSvg(f"not well-formed XML ({exc})") from exc
    if _local(root.tag) != "svg":
        raise InvalidSvg(f"root element is <{_local(root.tag)}>, not <svg>")
    ids = {node.get("id") for node in root.iter() if node.get("id")}

    def rename(ref: str) -> str:
        return f"{id_prefix}-{ref}" if ref in ids else ref

    def rewrite_urls(value: str) -> str:
        return _URL_REF.sub(lambda m: f"url(#{rename(m.group(2))})", value)

    for parent in list(root.iter()):
        for child in list(parent):
            if not isinstance(child.tag, str) or _local(child.tag) in _FORBIDDEN_TAGS:
                parent.remove(child)
    for node in root.iter():
        for name in list(node.attrib):
            value = node.attrib[name]
            if _local(name).lower().startswith("on"):
                del node.attrib[name]
            elif name in _HREF_ATTRS:
                if value.startswith("#"):
                    node.set(name, "#" + rename(value[1:]))
                elif not _INLINE_RASTER.match(value):  # anything else could fetch or run something
                    del node.attrib[name]
            elif name == "id":
                node.set(name, rename(value))
            elif "url(" in value:
                node.set(name, _EXTERNAL_URL.sub("none", rewrite_urls(value)))
        if _local(node.tag) == "style" and node.text:
            node.text = _EXTERNAL_URL.sub("none", rewrite_urls(node.text))
    return ET.tostring(root, encoding="unicode")
