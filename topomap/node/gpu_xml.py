"""XML for the GPU node readers: a tree whose elements know their line, so errors say ``file:line``."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from xml.parsers import expat

from ..errors import MachineError

__all__ = ["parse_xml", "where"]


def parse_xml(path: str | os.PathLike[str]) -> ET.Element:
    """Parse ``path``; every element gets a ``_line`` attribute (removed from nothing else, never written back).

    Malformed XML raises MachineError ``"path:line: ..."``.
    """
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()

    def start(tag: str, attrs: dict[str, str]) -> None:
        builder.start(tag, {**attrs, "_line": str(parser.CurrentLineNumber)})

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        with open(path, "rb") as fh:
            parser.ParseFile(fh)
    except expat.ExpatError as exc:
        raise MachineError(f"{path}:{exc.lineno}: malformed XML ({expat.errors.messages[exc.code]})") from None
    except OSError as exc:
        raise MachineError(f"{path}: cannot read ({exc.strerror})") from None
    return builder.close()


def where(path: str | os.PathLike[str], elem: ET.Element) -> str:
    """``"path:line"`` of an element from :func:`parse_xml`."""
    return f"{path}:{elem.get('_line', '?')}"
