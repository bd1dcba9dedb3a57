"""The mcusim command line run in this process with click's CliRunner: the exit status, stdout and
stderr a shell would see, without starting an interpreter. Tests about the installed console
script, signals or real terminals and pipes start a process instead."""
from dataclasses import dataclass

from click.testing import CliRunner

from mcusim.cli import main


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args, input: str | bytes | None = None) -> Done:
    """`mcusim ARGS...`. An exception the command lets escape is raised here: in a real process
    it would be a traceback, which no test accepts."""
    result = CliRunner().invoke(main, [str(arg) for arg in args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)
