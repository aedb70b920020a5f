"""What bench.py and compute.py share about their results: the CPU they ran
on, and their table written into README.md between markers."""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_model():
    """The CPU's model name from /proc/cpuinfo; "" where there is none."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def write_readme(text, marker):
    """Puts `text` between `<!-- MARKER:begin -->` and `<!-- MARKER:end -->`
    of README.md here (appended with the markers where they are missing), so
    each script rewrites its own table and nothing else."""
    readme = os.path.join(HERE, "README.md")
    old = open(readme).read() if os.path.exists(readme) else ""
    begin, end = "<!-- %s:begin -->" % marker, "<!-- %s:end -->" % marker
    if begin in old and end in old:
        new = old[:old.index(begin) + len(begin)] + "\n" + text + old[old.index(end):]
    else:
        new = old + "\n" + begin + "\n" + text + end + "\n"
    with open(readme, "w") as fout:
        fout.write(new)
