"""The CLI's shared conventions: ``--version`` and the one ``--json`` document format."""

import io
import json

from agentbed import __version__
from agentbed.cli import main
from agentbed.cli_json import FORMAT, emit


def test_version_prints_the_version_and_exits_0(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentbed {__version__}"


def test_a_json_document_names_its_format_and_command_and_is_strict_json():
    out = io.StringIO()
    emit("replay", {"steps": [{"reward": float("nan")}], "low": float("-inf"), "n": 3}, stream=out)
    line = out.getvalue()
    assert line.count("\n") == 1
    doc = json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
    assert list(doc)[:2] == ["format", "command"]
    assert doc == {"format": FORMAT, "command": "replay", "steps": [{"reward": None}], "low": None, "n": 3}
