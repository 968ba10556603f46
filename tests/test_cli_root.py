import subprocess
import sys

from clinbench import __version__


def test_console_script_prints_version():
    out = subprocess.run([sys.executable, "-m", "clinbench", "version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == __version__


def test_unknown_command_exits_2_with_hint():
    out = subprocess.run([sys.executable, "-m", "clinbench", "nope"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "No such command" in out.stderr
