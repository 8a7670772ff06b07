"""The journal's write-ahead log read as bytes: committed frames SQLite would drop unsaid.

SQLite reads its write-ahead log (``journal.sqlite3-wal``) frame by frame while each frame's
salts match the log's header and its checksum (cumulative from the header's) holds, and uses
the frames up to the last commit among them; what follows the first frame that fails is
ignored without a word. After a power cut that is right (the last frame was half written),
but a disk that wrote over a frame in the middle leaves committed frames after it: the
journal then reads shorter, its chain still sound, and a daemon would journal again seqs
the floor and every subscriber hold. :func:`frames_lost` tells that case: a frame that fails,
then a later commit frame with the header's salts (this generation of the log, not an older
one's leftovers). The format is SQLite's (https://www.sqlite.org/fileformat2.html#walformat).
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

HEADER, FRAME_HEADER = 32, 24
_MAGIC_LITTLE, _MAGIC_BIG = 0x377F0682, 0x377F0683


def _checksum(data: bytes, s0: int, s1: int, big_endian: bool) -> tuple[int, int]:
    """SQLite's log checksum of ``data`` (a multiple of 8 bytes) continued from (s0, s1)."""
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    mask = 0xFFFFFFFF
    for index in range(0, len(words), 2):
        s0 = (s0 + words[index] + s1) & mask
        s1 = (s1 + words[index + 1] + s0) & mask
    return s0, s1


def frames_lost(database: Path) -> str | None:
    """Why committed frames of ``database``'s log lie past one SQLite drops (None: the log is
    whole, missing, or ends in a frame cut short, as a power cut leaves it). Reads the log's
    bytes only: call it before SQLite opens the journal (a writer's checkpoint would reset
    the log)."""
    try:
        # not blocking: a FIFO at the log's name would wait for a writer for ever
        descriptor = os.open(f"{database}-wal", os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"the write-ahead log cannot be read ({error.strerror})"
    with os.fdopen(descriptor, "rb") as log:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return "the write-ahead log is not a file"
        try:
            header = log.read(HEADER)
            if len(header) < HEADER:
                return None
            magic, _, page_size, _, salt1, salt2, sum0, sum1 = struct.unpack(">8I", header)
            if magic not in (_MAGIC_LITTLE, _MAGIC_BIG) or page_size < 512 \
                    or page_size > 65536 or page_size & (page_size - 1):
                return None  # no log SQLite would read: nothing of it is used either way
            big = magic == _MAGIC_BIG
            if _checksum(header[:24], 0, 0, big) != (sum0, sum1):
                return None
            s0, s1, frame, failed_at = sum0, sum1, 0, 0
            while True:
                head = log.read(FRAME_HEADER)
                page = log.read(page_size)
                if len(head) < FRAME_HEADER or len(page) < page_size:
                    return None
                frame += 1
                _, committed, frame_salt1, frame_salt2, frame_sum0, frame_sum1 = \
                    struct.unpack(">6I", head)
                ours = (frame_salt1, frame_salt2) == (salt1, salt2)
                if not failed_at:
                    if ours:
                        s0, s1 = _checksum(head[:8] + page, s0, s1, big)
                    if not ours or (s0, s1) != (frame_sum0, frame_sum1):
                        failed_at = frame
                elif ours and committed:
                    return (f"the write-ahead log's frame {failed_at} is damaged, and frame "
                            f"{frame} after it commits a transaction SQLite will not read")
        except OSError:
            return None
