"""The ``agentbed`` command's exit status when Ctrl-C lands outside ``main``'s own handler."""

import pytest

import agentbed.cli as cli


def test_a_ctrl_c_after_mains_handler_still_exits_130(monkeypatch):
    def interrupted_on_the_way_out() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", interrupted_on_the_way_out)
    with pytest.raises(SystemExit) as leaving:
        cli.run()
    assert leaving.value.code == 130


def test_the_command_exits_with_mains_status(monkeypatch):
    monkeypatch.setattr(cli, "main", lambda: 2)
    with pytest.raises(SystemExit) as leaving:
        cli.run()
    assert leaving.value.code == 2
