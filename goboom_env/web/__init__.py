"""Play Go Boom in the browser against the agents, and watch recorded games: ``goboom serve``.

:func:`create_app` builds the Starlette app (:mod:`goboom_env.web.app`); :mod:`~goboom_env.web.session`
plays one game on the engine, :mod:`~goboom_env.web.store` keeps the live games, :mod:`~goboom_env.web.catalog`
lists the opponents a page may choose and :mod:`~goboom_env.web.replay` turns game records into frames.
The page itself (``static/``: one HTML, script and style sheet, no external assets) draws the frames.
Needs the ``web`` extra (``pip install "goboom-env[web]"``).
"""

from goboom_env.web.app import ServerSettings, create_app

__all__ = ["ServerSettings", "create_app"]
