"""Streamlit helpers shared by the app's pages (the package ``accfirst`` never imports Streamlit).

- ``ui.settings``: declarative settings that live in the URL — each ``Setting`` draws its
  widget, restores its value from the query string on a session's first run (bad values
  → the default, listed in the page's one notice, ``ui.link_notice``) and writes it back
  on change.
- ``ui.link_notice``: one collapsible notice at the top of the page for every setting of
  a link that the page could not use.
- ``ui.navigation``: the pages and their menu sections, defined once (``SECTIONS``).
- ``ui.frame``: the frame every page shares (page configuration, menu, dataset sidebar),
  drawn by ``app.py`` or, when Streamlit runs a page on its own, by the page.
- ``ui.dataset``: the shared sidebar — dataset picker (built-ins, or an upload with its
  preparation choices) and λ — and ``Selection``, what a page runs on.
- ``ui.runs``: runs of the package off the script thread — built-in data on the server's
  shared worker pool with results shared across sessions, uploads in the session's own
  thread and memo — in chunks for live progress, and one trial again for the step-by-step view.
- ``ui.work``: bounded work — the estimated time of a batch of runs, when to ask before
  running it, and the caps one click may not exceed.
- ``ui.cache``: a per-session memo for anything derived from an upload.
- ``ui.errors``: package errors → ``st.error`` with the package's message; anything
  else → a generic message; never a traceback.
- ``ui.memory``: process-wide allocator settings, so that memory a session frees (an
  upload) goes back to the system.
- ``ui.text``: visitors' text (URL values, file and column names) shown literally in
  Markdown (``plain``) and cut to ~80 characters (``short``).
"""
