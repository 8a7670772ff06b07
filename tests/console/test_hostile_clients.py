"""The third red-team pass on the console: a page on another host name, sign-ins fired all at
once or under forged addresses, a screen left open after its sign-in ended, and a command
given while the table is away. Each against the console process and the real daemon."""

from __future__ import annotations

from controller.console.link import TableLink
from tests.test_daemon import Rig, wait_for


def test_a_command_given_while_the_table_is_away_is_refused_and_never_sent_later(tmp_path):
    rig = Rig(tmp_path, "cali_lowball")
    table_id = rig.daemon.table_id
    rig.stop_daemon()
    stream = rig.stream
    views: list[dict] = []
    link = TableLink(table_id=table_id, spots=7, events=stream.events, replay=stream.replay,
                     commands=stream.commands, on_view=views.append)
    link.start()
    answers: list[dict] = []
    try:
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: answers, "an answer while the table is away", timeout=8)
        assert not answers[0]["ok"] and "nothing was sent" in answers[0]["error"]
        rig.start_daemon()
        wait_for(lambda: views and views[-1]["connected"], "the table back")
        link.send({"command": "open", "by": "test"}, answers.append)
        wait_for(lambda: len(answers) == 2, "the answer")
        assert answers[1]["ok"], answers[1]     # the first open was never carried out
    finally:
        link.stop()
        rig.close()
