"""Play Go Boom in the browser against the agents, and watch recorded games: ``goboom serve``.

:func:`create_app` builds the Starlette app; ``session`` plays one game, ``store`` keeps the live games, ``catalog``
lists the opponents a page may choose, ``replay`` turns game records into frames, and the page (``static/``: one
HTML, script and style sheet, no external assets) draws them. Needs the ``web`` extra.
"""

from goboom_env.web.app import ServerSettings, create_app

__all__ = ["ServerSettings", "create_app"]
