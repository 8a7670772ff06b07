"""A one-line description of the machine a benchmark ran on."""

import os
import platform


def describe() -> str:
    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{model}, {os.cpu_count()} cores, {platform.python_implementation()} "
            f"{platform.python_version()}, {platform.system()} {platform.machine()}")
