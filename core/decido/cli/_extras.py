"""Which extra brings a ``decido`` command, and the one line that names it when it is missing
(this module imports nothing beyond the standard library: it speaks when click is missing)."""

from __future__ import annotations

__all__ = ["EXTRA_OF_COMMAND", "internal", "missing_extra"]

#: the extra that brings a command: what to install when it cannot be loaded or run (the
#: service's commands are named here too, for when its entry points are absent)
EXTRA_OF_COMMAND = {"optimize": "cli", "decide": "cli", "runs": "cli",
                    "serve": "service", "keys": "service"}
#: the extra that brings a module any command may import
_EXTRA_OF_MODULE = {"click": "cli", "rich": "cli", "httpx": "client"}


def internal(module: str | None) -> bool:
    """True for a module inside decido or decido_service: missing, it is a bug to show (a
    traceback), not an extra to install (the packages themselves missing are an extra)."""
    return bool(module) and "." in str(module) and \
        str(module).split(".")[0] in ("decido", "decido_service")


def missing_extra(command: str, module: str | None) -> tuple[str, str]:
    """The line saying what ``decido COMMAND`` needs (``module`` could not be imported), and
    the extra it names."""
    top = (module or "").split(".")[0]
    extra = _EXTRA_OF_MODULE.get(top) or EXTRA_OF_COMMAND.get(command, "cli")
    why = f" ({top} is not installed)" if top and top not in ("decido", "decido_service") \
        else ""
    what = f"decido {command}".strip()
    return (f"decido: `{what}` needs the {extra!r} extra{why}: pip install 'decido[{extra}]'",
            extra)
