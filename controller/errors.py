"""The project's exception root, and what stops the daemon from starting.

Every exception the project defines derives from :class:`LowballError`, so a caller can tell
the table's own errors from anything else with one ``except``, and matches a particular one
by its class and its fields, never by its message (the message is for people: it may be
reworded). Each class keeps the builtin base it has always had (``ValueError`` for bad input,
``RuntimeError`` for a failed operation) beside the root, so ``except ValueError`` still
catches a bad card, and pydantic validators still turn one into a validation error.

:class:`StartupError` carries a message that names the cause and what to do about it;
``lowball-table run`` prints it on one line and exits 2, never with a traceback.

Standard library only: every layer imports this module, the core and the drivers included.

The tree (each class, its builtin base in brackets where it has one, and its module; kept
true by tests/tree/test_errors.py, which prints it anew when a class is added or moved)::

    LowballError
        SoakFailure (AssertionError)  bench.pipeline
        DaemonDied  bench.power_loss
        ArgumentError (ValueError)  controller.cli.math
        WatchError  controller.cli.watch
        BadMessage (ValueError)  controller.console.messages
        CardError (ValueError)  controller.core.cards
        RecordError (ValueError)  controller.core.commands
        IllegalAction (ValueError)  controller.core.games.base
            DuplicateCard  controller.core.games.base
        WagerError (ValueError)  controller.core.games.base
        MoneyError (ValueError)  controller.core.money
        DeclarationError (ValueError)  controller.core.record_gen
        CommandError (ValueError)  controller.core.table
        SettingsError (ValueError)  controller.core.table_settings
        IllegalTransition (RuntimeError)  controller.core.table_states
        TableHeld (RuntimeError)  controller.daemon.chain_watch
        CheckpointRefused (ValueError)  controller.daemon.checkpoints
        EvidenceNotKept  controller.daemon.held_mark
        QuarantineRefused (RuntimeError)  controller.daemon.journal_quarantine
        StateDirLocked (RuntimeError)  controller.daemon.state_lock
        TooManyWithdrawals  controller.daemon.withdrawals
        StartupError (RuntimeError)  controller.errors
            ConfigMismatch  controller.daemon.loop
        FeedError (RuntimeError)  controller.floor.feed
        ClusterUnavailable (RuntimeError)  controller.floor.local_cluster
        PoolError (ValueError)  controller.floor.pool
        Disputed (ValueError)  controller.floor.pool_hits
        SchemaError (RuntimeError)  controller.floor.store
        InputError (ValueError)  controller.settings.validation
            ScenarioError  controller.settings.scenario
        StreamError (RuntimeError)  controller.stream.client
            StreamMalformed  controller.stream.client
            StreamTimeout  controller.stream.client
        CommandTimeout (TimeoutError)  controller.stream.command_client
        ReplyError  controller.stream.command_replies
        RequestRefused (ValueError)  controller.stream.command_requests
        Unfit  controller.stream.event_encoder
        JournalError (RuntimeError)  controller.stream.journal_records
            JournalBroken  controller.stream.journal_records
                JournalReplaced  controller.daemon.chain_watch
        PoolChannelError (ValueError)  controller.stream.pool_channel
        WireError (ValueError)  controller.stream.wire
        DeviceUnavailable  drivers.base
        FrameContentError (ValueError)  drivers.lbs1
        UnknownDriver (ValueError)  drivers.registry
        SpotControllerError  drivers.spots
            SpotCommandRefused  drivers.spots
            SpotControllerLost  drivers.spots
        ReportError (ValueError)  drivers.usb_report
"""

from __future__ import annotations


class LowballError(Exception):
    """The root of every exception the project defines."""


class StartupError(LowballError, RuntimeError):
    """The daemon cannot start: the message names the cause and what to do."""
