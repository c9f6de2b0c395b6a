"""marimo's own HTML export (its rendered outputs and widgets) made to open offline, from file://.

`marimo export html` writes a page whose frontend (~190 ES modules) comes from cdn.jsdelivr.net,
and Chromium refuses to load module files from file:// anyway (origin null). This takes the same
frontend from the installed marimo wheel (`marimo/_static/assets`) and bundles its entry with
esbuild into one ES module, every dynamic import inlined (no code splitting). The page carries it
gzipped and base64'd (21 MB -> 8 MB) and a small inline module unzips it (DecompressionStream) and
runs it as an inline `<script type="module">`, which file:// allows. marimo's CSS, with its woff2
fonts as data: URIs, goes in a `<style title="marimo-...">`: marimo copies only such sheets (or its
CDN ones) into its widgets' shadow roots, and untitled, a slider draws no track. The notebook's code
and executed outputs stay where marimo put them, in `__MARIMO_MOUNT_CONFIG__`. vite's lazy-chunk
preloads (`__vite__mapDeps`) are emptied, as the chunks are in the bundle and all CSS is inline.
The MathJax script that marimo's plotly output fetches from the CDN (for LaTeX in charts, which ours
have none of) becomes an empty data: script. Left remote, and only fetched if used: mo.icon's
iconify icons and editor-only features.

Needs esbuild (an npm package, not a library dependency): $ESBUILD, else `esbuild` on PATH, else
<venv>/esbuild/node_modules/.bin/esbuild, where `make marimo-html` installs it.

Usage: python tools/export_marimo_html.py OUT_DIR notebooks/01_extraction.py [...]  (`make marimo-html`)
"""

import base64
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ESBUILD_VERSION = "0.28.2"
VENV_ESBUILD = Path(sys.prefix) / "esbuild" / "node_modules" / ".bin" / "esbuild"
ESBUILD_HINT = (f"esbuild not found: `npm install --prefix {VENV_ESBUILD.parents[2]} esbuild@{ESBUILD_VERSION}` "
                "(what `make marimo-html` does), or set ESBUILD=/path/to/esbuild")
MATHJAX = re.compile(r"https://cdn\.jsdelivr\.net/npm/mathjax-full@[^`\"']+")
CDN_ASSET = r'https://cdn\.jsdelivr\.net/npm/@marimo-team/frontend@[^/]+/dist/(?:assets/)?'
ENTRY = re.compile(rf'<script type="module" crossorigin src="{CDN_ASSET}([^"]+\.js)"></script>')
REMOTE_LINK = re.compile(rf'\s*<link rel="[^"]*"[^>]*href="{CDN_ASSET}[^"]*"[^>]*>')
CSS_FALLBACKS = re.compile(r',url\(\./[^)]+\.(?:woff|ttf)\)format\("(?:woff|truetype)"\)')
CSS_URL = re.compile(r'url\(\./([^)]+\.(woff2|png|svg))\)')
UNZIP_AND_RUN = """<script type="module">
const zipped = Uint8Array.from(atob(document.getElementById("marimo-frontend").textContent), c => c.charCodeAt(0));
const js = await new Response(new Blob([zipped]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
document.head.append(Object.assign(document.createElement("script"), {type: "module", textContent: js}));
</script>"""
MIME = {"woff2": "font/woff2", "png": "image/png", "svg": "image/svg+xml"}


def find_esbuild() -> str:
    """The esbuild binary ($ESBUILD, PATH, then the venv's); SystemExit with the install command when missing."""
    found = os.environ.get("ESBUILD") or shutil.which("esbuild") or str(VENV_ESBUILD)
    if not Path(found).is_file():
        raise SystemExit(ESBUILD_HINT)
    return found


def bundle_frontend(entry: str, esbuild: str) -> tuple[str, str]:
    """(JS, CSS) of marimo's frontend from the installed wheel: the entry chunk bundled into one ES
    module (gzipped, base64), and every stylesheet with its woff2 fonts and images inlined (woff/ttf
    fallbacks dropped)."""
    import marimo

    assets = Path(marimo.__file__).parent / "_static" / "assets"
    with tempfile.TemporaryDirectory() as tmp:
        for js in assets.glob("*.js"):
            text = js.read_text(encoding="utf-8")
            (Path(tmp) / js.name).write_text(re.sub(r"__vite__mapDeps\(\[[\d,]*\]\)", "[]", text), encoding="utf-8")
        out = Path(tmp) / "bundle.out.js"
        subprocess.run([esbuild, str(Path(tmp) / entry), "--bundle", "--format=esm", "--minify",
                        "--legal-comments=none", "--log-level=error", f"--outfile={out}"], check=True)
        js = MATHJAX.sub("data:text/javascript,", out.read_text(encoding="utf-8"))
    zipped = base64.b64encode(gzip.compress(js.encode(), 6)).decode()

    def data_uri(m: re.Match) -> str:
        return f"url(data:{MIME[m.group(2)]};base64,{base64.b64encode((assets / m.group(1)).read_bytes()).decode()})"

    # The index stylesheet first, as in marimo's page; the lazily loaded components' ones after it.
    sheets = sorted(assets.glob("*.css"), key=lambda p: not p.name.startswith("index-"))
    css = "\n".join(CSS_URL.sub(data_uri, CSS_FALLBACKS.sub("", p.read_text(encoding="utf-8"))) for p in sheets)
    return zipped, css


def inline_frontend(page: str, zipped: str, css: str) -> str:
    """`page` (a `marimo export html` page) with its CDN script, stylesheets and preloads replaced by
    `bundle_frontend`'s JS and CSS."""
    page = REMOTE_LINK.sub("", ENTRY.sub("<!--marimo-frontend-->", page))
    if re.search(CDN_ASSET, page):
        raise RuntimeError(f"a CDN reference this tool does not know: {re.search(CDN_ASSET + '.*', page).group()}")
    css = css.replace("</style", "<\\/style")
    return page.replace("<!--marimo-frontend-->", f'<style title="marimo-frontend">{css}</style>\n'
                        f'<script type="application/gzip" id="marimo-frontend">{zipped}</script>\n{UNZIP_AND_RUN}', 1)


def export_marimo_html(notebooks: list[Path], out_dir: Path) -> list[Path]:
    """Run `marimo export html` on each notebook .py and write OUT_DIR/<name>.html, opening offline."""
    esbuild = find_esbuild()
    out_dir.mkdir(parents=True, exist_ok=True)
    frontend, written = None, []
    for nb in notebooks:
        out = out_dir / f"{nb.stem}.html"
        with tempfile.TemporaryDirectory() as tmp:  # where the export's session snapshot goes, not notebooks/__marimo__
            subprocess.run([sys.executable, "-m", "marimo", "export", "html", str(nb), "-o", str(out), "--force"],
                           check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPYCACHEPREFIX": tmp})
        page = out.read_text(encoding="utf-8")
        if not (entry := ENTRY.search(page)):
            raise RuntimeError(f"{out}: no <script> of marimo's frontend from the CDN (a marimo this tool doesn't know)")
        frontend = frontend or bundle_frontend(entry.group(1), esbuild)
        out.write_text(inline_frontend(page, *frontend), encoding="utf-8")
        written.append(out)
    return written


if __name__ == "__main__":
    for path in export_marimo_html([Path(p) for p in sys.argv[2:]], Path(sys.argv[1])):
        print(path)
