"""``lowball-table console``: the table's screens in a browser, served by the console itself.

The console is a client of the daemon like any other: it reads the event stream
(:class:`controller.stream.client.StreamClient`) and sends commands on the command channel.
It never opens the journal and never reaches into the table's memory, so a console that
crashes or restarts never touches a hand.
"""
