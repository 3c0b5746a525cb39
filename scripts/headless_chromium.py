# SPDX-License-Identifier: GPL-2.0
"""Start Debian's chromium headless under Selenium, for the browser tests.

  import headless_chromium
  driver = headless_chromium.start()        # raises BrowserMissing with the fix

The closed network of the test machines refuses connections, so every
feature that phones home is off and the profile directory is new and empty.
"""
import os
import time
import shutil
import sys
import tempfile

INSTALL = "apt-get install -y chromium chromium-driver python3-selenium (or run: make deps)"


class BrowserMissing(Exception):
    pass


def log_dir(repo):
    d = os.environ.get("TEST_LOG_DIR") or os.path.join(repo, "build", "test-logs")
    os.makedirs(d, exist_ok=True)
    return d


def import_selenium():
    """Debian's python3-selenium, also under a python3 that is not Debian's
    (a pyenv first in PATH): selenium is pure Python."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        deb = "/usr/lib/python3/dist-packages"
        if os.path.isdir(os.path.join(deb, "selenium")) and deb not in sys.path:
            sys.path.append(deb)
        try:
            import selenium  # noqa: F401
        except ImportError:
            raise BrowserMissing("python3-selenium is not installed; run: " + INSTALL)


def start(width=1280, height=900):
    import_selenium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    browser = shutil.which("chromium") or "/usr/bin/chromium"
    driver_bin = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    for path, what in ((browser, "chromium"), (driver_bin, "chromedriver (chromium-driver)")):
        if not os.access(path, os.X_OK):
            raise BrowserMissing("%s not found at %s; run: %s" % (what, path, INSTALL))
    profile = tempfile.mkdtemp(prefix="chromium-profile.")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", "--user-data-dir=" + profile,
              "--window-size=%d,%d" % (width, height)):
        opts.add_argument(a)
    try:
        drv = webdriver.Chrome(service=Service(driver_bin), options=opts)
    except Exception as e:
        shutil.rmtree(profile, ignore_errors=True)
        raise BrowserMissing("chromium did not start under chromedriver (%s); "
                             "check: %s --headless --no-sandbox --dump-dom about:blank"
                             % (str(e).strip().splitlines()[0] if str(e).strip() else e, browser))
    drv.set_page_load_timeout(60)
    orig_quit = drv.quit

    def quit():
        try:
            orig_quit()
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    drv.quit = quit
    return drv


def wait_for(drv, js, timeout=10):
    """Poll the page's script js until it returns something true (its value) or timeout s pass (None)."""
    end = time.time() + timeout
    while time.time() < end:
        v = drv.execute_script(js)
        if v:
            return v
        time.sleep(0.05)
    return None
