"""Open every page of the built book in headless Chromium, as a reader would."""

from urllib.parse import urldefrag, urlparse

import pytest

from tests.book.conftest import chromium_path
from tests.book.pages import PAGES, record

playwright_api = pytest.importorskip("playwright.sync_api")

# The reader's browser is online; this one is not. Requests to other hosts (CDNs) are cut off on purpose,
# and only the errors of the book's own pages and files count.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
HTML = [f"{p.relative_to(record.ROOT).with_suffix('.html').as_posix()}" for p in PAGES]


@pytest.fixture(scope="module")
def browser():
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium found (Debian: apt-get install chromium); .ci/run installs it")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, book_url):
    context = browser.new_context()
    pg = context.new_page()
    pg.errors = []
    local = urlparse(book_url).netloc

    def route(r):
        return r.continue_() if urlparse(r.request.url).netloc == local else r.abort()

    pg.route("**/*", route)
    pg.on("pageerror", lambda exc: pg.errors.append(f"page error: {exc}"))
    pg.on("console", lambda m: m.type == "error" and local in (m.location or {}).get("url", local)
          and "ERR_FAILED" not in m.text and pg.errors.append(f"console: {m.text}"))
    yield pg
    context.close()


@pytest.mark.parametrize("path", HTML, ids=[p.stem for p in PAGES])
def test_page_loads_cleanly(page, book_url, built_book, path):
    response = page.goto(f"{book_url}/{path}")
    assert response.ok
    page.wait_for_load_state("load")
    assert page.title()
    assert page.errors == []
    broken_images = page.eval_on_selector_all(
        "main img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
    assert broken_images == []
    for href in page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)"):
        url, anchor = urldefrag(href)
        if not url.startswith(book_url):
            continue
        target = built_book / urlparse(url).path.lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        assert target.exists(), f"{path}: broken link to {href}"
        if anchor and target.suffix == ".html":
            assert f'id="{anchor}"' in target.read_text(), f"{path}: link to a missing anchor {href}"


def test_next_and_previous_walk_the_whole_book(page, book_url):
    page.goto(f"{book_url}/{HTML[0]}")
    for link, expected_pages in (("a.right-next", HTML[1:]), ("a.left-prev", reversed(HTML[:-1]))):
        for expected in expected_pages:
            with page.expect_navigation():
                page.click(link)
            assert page.url.split("#")[0].endswith(expected)


def test_search_finds_a_term(page, book_url):
    page.goto(f"{book_url}/search.html?q=register_buffer")
    page.wait_for_selector("#search-results ul.search li", timeout=15000)
    hits = page.eval_on_selector_all("#search-results ul.search li a", "as => as.map(a => a.href)")
    assert any("models-and-buffers" in h for h in hits), hits


VISIBLE = "els => els.filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden').length"


@pytest.mark.parametrize("width", [1280, 1600])
def test_one_search_box_and_command_blocks_that_fit(browser, book_url, width):
    """A reader sees one search box (the theme also offers one in the left sidebar, left out in _config.yml),
    and the intro's command block whole at a laptop's width (issue 29)."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.route("**/*", lambda r: r.continue_() if r.request.url.startswith(book_url) else r.abort())
    pg.goto(f"{book_url}/book/intro.html")
    pg.wait_for_load_state("load")
    assert pg.eval_on_selector_all(".search-button-field, form.bd-search, button.search-button", VISIBLE) == 1
    cut = pg.eval_on_selector_all("div.highlight pre", "ps => ps.filter(p => p.scrollWidth > p.clientWidth + 1)"
                                  ".map(p => p.textContent.slice(0, 60))")
    assert cut == []
    context.close()
