"""How a process is started where no one sits at a terminal, for the tests that start one so.

A non-interactive shell (a script, a CI runner's step, ``nohup ... &``) starts ``cmd &`` with
SIGINT and SIGQUIT ignored (POSIX, Shell Command Language 2.11: an asynchronous list without
job control "shall inherit ... SIGINT and SIGQUIT ignored"), and an ignored signal stays
ignored across exec. ``<&-`` closes standard input, as some schedulers leave it. ``sh -c``
with ``trap '' INT`` and ``exec`` does exactly that, without ``preexec_fn`` (unsafe in a process
with threads, as a pytest-xdist worker is).
"""

from __future__ import annotations

AS_A_BACKGROUND_JOB = ("sh", "-c", "trap '' INT; exec \"$@\" <&-", "sh")
