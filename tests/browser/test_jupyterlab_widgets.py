"""04's ipywidgets panel in a real JupyterLab, in headless Chromium driven over the DevTools protocol.

Proves that, in JupyterLab (where marimo's widgets do not render), running notebooks/04_retrieval.ipynb
draws `retrieval_panel`'s controls (the 'question' dropdown, the 'k' slider) and its output ("asked:"),
that choosing another question in the dropdown fills the output again for that question, and that the
browser asked nothing of any host but 127.0.0.1 (all lookups fail; Chromium's net log is checked).

Skipped without Chromium, JupyterLab (with jupyterlab_widgets) or websocket-client.
"""

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from test_browser import CHROMIUM, page_requests

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "04_retrieval.ipynb"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH (Debian: apt-get install -y chromium)"),
]

# The panel (the VBox holding the 'question' dropdown, the 'k' slider and an Output) as JSON, or "".
PANEL = """(() => { const labelled = (root, cls, label) => [...(root?.querySelectorAll(cls) ?? [])]
    .find(e => e.querySelector('label')?.textContent === label);
  const d = labelled(document, '.widget-dropdown', 'question'), box = d?.closest('.widget-vbox');
  const out = box?.querySelector('.widget-output');
  return d && labelled(box, '.widget-slider', 'k') && out ? JSON.stringify({question: d.querySelector('select').value,
    options: [...d.querySelectorAll('option')].map(o => o.value), output: out.textContent}) : ''; })()"""

# What the page shows, for a failure's message.
STATE = """JSON.stringify({app: !!window.jupyterapp, url: location.href, title: document.title,
  widget: window.jupyterapp?.shell.currentWidget?.title.label,
  kernel: window.jupyterapp?.shell.currentWidget?.sessionContext?.kernelDisplayStatus,
  dialog: document.querySelector('.jp-Dialog')?.innerText,
  errors: [...document.querySelectorAll('.jp-OutputArea-output[data-mime-type*=error]')]
    .map(e => e.innerText.slice(-500)),
  body: document.body?.innerText.slice(0, 300)})"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(probe, timeout: float, what: str, step: float = 0.5, state=lambda: ""):
    """`probe()`'s first truthy value, polled until `timeout` seconds passed (the failure says `state()`)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := probe():
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; {state()}")


class Page:
    """One Chromium tab over CDP: `js(expr)` evaluates an expression (awaiting a promise) to its value."""

    def __init__(self, ws_url: str):
        import websocket

        self.ws, self.n = websocket.create_connection(ws_url, timeout=60, suppress_origin=True), 0
        self.events: list[dict] = []  # what the tab reported (console messages, errors) while a call waited

    def call(self, method: str, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while (reply := json.loads(self.ws.recv())).get("id") != self.n:
            if "method" in reply:
                self.events.append(reply)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def js(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JS failed: {result['exceptionDetails']}")
        return result["result"].get("value")


@pytest.fixture
def jupyterlab(tmp_path):
    """A JupyterLab server on a free port with a token over a copy of 04, with window.jupyterapp exposed;
    yields its base URL and token."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupyterlab_widgets")
    pytest.importorskip("ipywidgets")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / NOTEBOOK.name)
    # every cell in the DOM (JupyterLab's windowing would leave those out of view out of it or empty)
    tracker = tmp_path / "lab-settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text('{"windowingMode": "none"}')
    port, token = free_port(), secrets.token_hex(16)
    user_env = {k: v for k, v in os.environ.items() if k != "PLOTLY_RENDERER"}  # JupyterLab's own renderer, as a user has
    env = {**user_env, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
           "TQDM_DISABLE": "1", "JUPYTER_CONFIG_DIR": str(tmp_path / "jconfig"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "jruntime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces")}
    with served([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
                 f"--port={port}", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                 "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
                 "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
                env, tmp_path / "jupyter.log", f"http://127.0.0.1:{port}/api/status?token={token}", "the JupyterLab server"):
        yield f"http://127.0.0.1:{port}", token


@contextlib.contextmanager
def served(cmd: list[str], env: dict, log_path: Path, status_url: str, what: str, cwd: Path | None = None):
    """A server process from `cmd` (output to `log_path`), up once `status_url` answers 200 (60 s at most),
    ended (terminated, else killed) on leaving."""
    with log_path.open("w") as log:
        server = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)

        def up():
            try:
                with urllib.request.urlopen(status_url, timeout=2) as reply:  # closed: no socket left to gc
                    return reply.status == 200
            except OSError:
                assert server.poll() is None, log_path.read_text()[-3000:]
                return False

        try:
            wait_for(up, 60, what)
            yield
        finally:
            server.terminate()
            try:
                server.wait(15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@pytest.fixture
def chromium(tmp_path):
    """Headless Chromium with a DevTools port, every host lookup but 127.0.0.1 failing and a net log;
    yields (a Page on its first tab, `stop()`: ends Chromium, which writes out the net log, and returns
    the log's path)."""
    pytest.importorskip("websocket", reason="needs websocket-client (a dependency of jupyter_server)")
    profile, netlog = tmp_path / "chrome-profile", tmp_path / "netlog.json"
    browser = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                "--disable-background-networking", "--no-first-run", "--remote-debugging-port=0",
                                f"--user-data-dir={profile}",
                                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                                f"--log-net-log={netlog}", "--window-size=1400,1000", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = endpoint = None

    def stop() -> Path:
        if page is not None:
            page.ws.close()
        if endpoint is not None and browser.poll() is None:
            try:  # a clean exit finishes the net log (after SIGTERM it may be cut short)
                browser_page = Page(endpoint)
                try:
                    browser_page.call("Browser.close")
                finally:
                    browser_page.ws.close()
            except Exception:
                pass
        for end in ([] if endpoint is None else [lambda: None]) + [browser.terminate, browser.kill]:
            end()
            try:
                browser.wait(15)
                break
            except subprocess.TimeoutExpired:
                pass
        return netlog

    try:
        active = profile / "DevToolsActivePort"
        port, path = wait_for(lambda: active.is_file() and len(lines := active.read_text().split()) == 2 and lines,
                              30, "Chromium's DevToolsActivePort")
        endpoint = f"ws://127.0.0.1:{port}{path}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            targets = json.loads(reply.read())
        page = Page(next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page"))
        yield page, stop
    finally:
        if page is not None:
            page.ws.close()  # closing twice is a no-op
        if browser.poll() is None:
            browser.kill()
            browser.wait()


def panel_showing(page: Page, ok, timeout: float, what: str) -> dict:
    """The panel (`PANEL`) once drawn with `ok(panel)` true, polled for `timeout` seconds."""
    def probe():
        return (shown := page.js(PANEL)) and ok(panel := json.loads(shown)) and panel

    return wait_for(probe, timeout, what, state=lambda: page.js(STATE))


def console_errors(page: Page) -> list[str]:
    """Uncaught exceptions and console errors the tab reported so far."""
    out = []
    for e in page.events:
        p = e.get("params", {})
        if e["method"] == "Runtime.exceptionThrown":
            details = p["exceptionDetails"]
            out.append(details.get("exception", {}).get("description") or details.get("text", ""))
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") == "error":
            out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
            out.append(f"{p['entry']['source']}: {p['entry']['text']} {p['entry'].get('url', '')}")
    return out


# The 'k' slider of the retrieval panel: its track and handle (page coordinates, scrolled into view) and value.
SLIDER = """(() => { const s = [...document.querySelectorAll('.widget-slider')]
    .find(e => e.querySelector('label')?.textContent === 'k');
  s.scrollIntoView({block: 'center'});
  const box = e => { const r = s.querySelector(e).getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height}; };
  return JSON.stringify({track: box('.noUi-target'), handle: box('.noUi-handle'),
    value: s.querySelector('.widget-readout').textContent.trim()}); })()"""

# The note panel: its drop-down's options and value, and the explain frame's height against its page's.
NOTE_PANEL = """(() => { const d = [...document.querySelectorAll('.widget-dropdown')]
    .find(e => e.querySelector('label')?.textContent === 'note');
  const frame = d?.closest('.widget-vbox')?.querySelector('.widget-output iframe');
  const doc = frame?.contentDocument;
  return d && doc?.readyState === 'complete' ? JSON.stringify({value: d.querySelector('select').value,
    options: [...d.querySelectorAll('option')].map(o => o.value), title: doc.querySelector('h1')?.textContent,
    frame: frame.getBoundingClientRect().height, page: doc.documentElement.scrollHeight}) : ''; })()"""


def drag(page: Page, start: tuple[float, float], end: tuple[float, float], steps: int = 12) -> None:
    """Press the left button at `start`, move to `end` in `steps` and release: a mouse drag."""
    mouse = lambda kind, x, y, **kw: page.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", **kw)
    mouse("mouseMoved", *start, buttons=0)
    mouse("mousePressed", *start, buttons=1, clickCount=1)
    for i in range(1, steps + 1):
        mouse("mouseMoved", start[0] + (end[0] - start[0]) * i / steps, start[1] + (end[1] - start[1]) * i / steps,
              buttons=1)
    mouse("mouseReleased", *end, buttons=0, clickCount=1)


def test_retrieval_panel_renders_and_follows_the_dropdown_in_jupyterlab(jupyterlab, chromium):
    url, token = jupyterlab
    page, stop = chromium
    page.call("Emulation.setFocusEmulationEnabled", enabled=True)
    page.call("Runtime.enable")
    page.call("Log.enable")
    page.call("Page.navigate", url=f"{url}/lab/tree/{NOTEBOOK.name}?token={token}")
    # the notebook open and its kernel up (the twin names no kernel: JupyterLab starts its default one);
    # headless Chromium has no focus, so the notebook is made the current widget by hand
    wait_for(lambda: page.js(f"""(async () => {{ const app = window.jupyterapp;
      const nb = app && [...app.shell.widgets('main')].find(w => w.context?.path === {json.dumps(NOTEBOOK.name)});
      if (!nb?.context.isReady) return false;
      await nb.sessionContext.ready; app.shell.activateById(nb.id);
      return nb.sessionContext.session?.kernel?.connectionStatus === 'connected'
        && app.shell.currentWidget === nb; }})()"""),
             120, "04 open in JupyterLab with a connected kernel", state=lambda: page.js(STATE))
    page.js("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    shown = panel_showing(page, lambda p: "asked: " in p["output"], 120, "the panel's controls and output")
    first = shown["question"]
    assert shown["output"].startswith(first + " "), shown["output"]

    other = next(q for q in shown["options"] if q != first)
    page.js(f"""(() => {{ const s = [...document.querySelectorAll('.widget-dropdown')]
      .find(e => e.querySelector('label')?.textContent === 'question').querySelector('select');
      s.value = {json.dumps(other)}; s.dispatchEvent(new Event('change', {{bubbles: true}})); }})()""")
    again = panel_showing(page, lambda p: p["output"].startswith(other + " "), 120, f"the output to show {other}")
    assert "asked: " in again["output"] and again["question"] == other

    # the k slider, dragged by mouse from 5 to about 12 (its track was 8 px wide, squeezed by the other controls)
    slider = json.loads(page.js(SLIDER))
    track, handle = slider["track"], slider["handle"]
    assert slider["value"] == "5" and track["width"] >= 150, slider
    y = handle["y"] + handle["height"] / 2
    drag(page, (handle["x"] + handle["width"] / 2, y), (track["x"] + track["width"] * 11 / 19, y))
    moved = panel_showing(page, lambda p: "Top 5 of" not in p["output"] and "Top " in p["output"], 120,
                          "the output to follow the dragged slider")
    k = int(json.loads(page.js(SLIDER))["value"])
    assert 10 <= k <= 14 and f"Top {k} of" in moved["output"], (k, moved["output"][:300])

    # 04's note drop-down (cell 12): every note, and the chosen note's explain page in a frame as high as the page
    notes = wait_for(lambda: (shown := page.js(NOTE_PANEL)) and json.loads(shown), 120, "the note panel",
                     state=lambda: page.js(STATE))
    assert len(notes["options"]) > 10 and notes["value"] in notes["options"]
    assert notes["title"] == f"Why (not) note {notes['value']}?" and notes["frame"] >= notes["page"] > 900, notes
    other_note = next(n for n in notes["options"] if n != notes["value"])
    page.js(f"""(() => {{ const s = [...document.querySelectorAll('.widget-dropdown')]
      .find(e => e.querySelector('label')?.textContent === 'note').querySelector('select');
      s.value = {json.dumps(other_note)}; s.dispatchEvent(new Event('change', {{bubbles: true}})); }})()""")
    chosen = wait_for(lambda: (shown := page.js(NOTE_PANEL)) and (n := json.loads(shown))["title"]
                      == f"Why (not) note {other_note}?" and n, 120, f"the note panel to explain {other_note}")
    assert chosen["frame"] >= chosen["page"]

    # the explain frames grew to their page's height: no scrollbar of their own, nothing undefined called
    frames = json.loads(page.js("""JSON.stringify([...document.querySelectorAll('.jp-OutputArea-output iframe')]
      .filter(f => f.contentDocument?.querySelector('h1')?.textContent.startsWith('Why (not) note'))
      .map(f => [f.getBoundingClientRect().height, f.contentDocument.documentElement.scrollHeight]))"""))
    assert len(frames) >= 3 and all(height >= page_height for height, page_height in frames), frames
    assert console_errors(page) == []

    asked = page_requests(stop(), local_host="127.0.0.1")
    assert asked == [], f"the browser asked the network for {asked}"


def test_the_net_log_catches_a_fetch_off_the_machine(chromium):
    page, stop = chromium
    page.js("fetch('https://example.com/x').catch(() => 0).then(() => new Promise(r => setTimeout(r, 500)))")
    assert any("example.com" in u for u in page_requests(stop(), local_host="127.0.0.1"))
