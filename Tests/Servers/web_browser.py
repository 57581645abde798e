#!/usr/bin/env python3
"""The frame's page in a real browser at a phone's size: Debian's Chromium
and chromedriver, driven by Selenium (pinned in web-requirements.txt, in a
virtual environment of Debian's Python kept in .build-web/), against
carouseld-web beside the real daemon on the offscreen display.

A person signs in, taps Next and sees the frame move, adds three pictures
(one HEIC) and a clip from the file picker with a progress bar each and
sees them in the daemon's `list`, in light and dark, at 360 px wide with
nothing wider than the screen and no error in the browser's console (a
Content-Security-Policy violation is one). `--screenshots DIR` keeps the
README's pictures of each page.

Usage: web_browser.py CAROUSELD CAROUSELD_WEB [--screenshots DIR]
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
REQUIREMENTS = os.path.join(HERE, "web-requirements.txt")
CACHE = os.path.join(REPO, ".build-web")


def venv_python():
    """The virtual environment's Python, made unless .build-web/ has the one
    the requirements and this Python make."""
    sys.path.insert(0, HERE)
    from checks import pinned_venv
    return pinned_venv(REQUIREMENTS, CACHE, "python", timeout=900)[0]


try:
    from selenium import webdriver  # noqa: F401
except ImportError:
    # Run again by the virtual environment's Python, which has Selenium.
    os.execv(venv_python(), [venv_python(), os.path.abspath(__file__)] + sys.argv[1:])

import json  # noqa: E402
import time  # noqa: E402

from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

sys.path.insert(0, HERE)
from checks import IMAGES, CheckSuite, Failure, until  # noqa: E402
from web_e2e import FIXTURES, PASSWORD, Frame, clip, expect  # noqa: E402
import web_https  # noqa: E402

WIDTH, HEIGHT = 360, 780


def browser(*extra_args):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                f"--window-size={WIDTH},{HEIGHT}", "--force-device-scale-factor=1", "--lang=en-US", *extra_args):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # The viewport itself at the phone's width (the window has none of a phone's chrome).
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 2, "mobile": True})
    driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True})
    driver.set_page_load_timeout(60)
    return driver


def text_of(driver, selector):
    """The text of the first element `selector` finds, "" while the page is being replaced."""
    try:
        return driver.find_element(By.CSS_SELECTOR, selector).text
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def script(driver, code):
    """What `code` returns, None while the page is being replaced."""
    try:
        return driver.execute_script(code)
    except WebDriverException:
        return None


def count_of(driver, selector):
    try:
        return len(driver.find_elements(By.CSS_SELECTOR, selector))
    except StaleElementReferenceException:
        return 0


def console_errors(driver):
    """Errors the page made: scripts and security (a CSP violation), not the
    answers the test asked for (a wrong password's 401)."""
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE" and e.get("source") != "network"]


def fits_the_phone(driver, page):
    width = driver.execute_script("return document.documentElement.scrollWidth")
    expect(width <= WIDTH, f"{page}: the page is {width} px wide on a {WIDTH} px phone")
    small = driver.execute_script("""
        return Array.from(document.querySelectorAll('button, nav a, input[type=file], input[type=password]'))
          .filter(e => e.offsetParent !== null)
          .map(e => [e.textContent.trim() || e.getAttribute('aria-label') || e.id, e.getBoundingClientRect().height])
          .filter(p => p[1] < 44);
        """)
    expect(not small, f"{page}: tap targets under 44 px tall: {small}")


def main():
    args = sys.argv[1:]
    screenshots = None
    if "--screenshots" in args:
        i = args.index("--screenshots")
        screenshots = os.path.abspath(args[i + 1])
        del args[i:i + 2]
        os.makedirs(screenshots, exist_ok=True)
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    suite = CheckSuite(os.path.abspath(args[0]), "carouseld-web-browser-")
    suite.web = os.path.abspath(args[1])
    suite.cleanup_frames = []
    frame = Frame(suite, "frame")
    driver = browser()
    state = {}

    def shot(name, dark=False):
        if not screenshots:
            return
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        time.sleep(0.2)
        driver.save_screenshot(os.path.join(screenshots, f"web-{name}.png"))
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                               {"features": [{"name": "prefers-color-scheme", "value": "light"}]})

    def first_run():
        driver.get(frame.origin + "/")
        until("the first page", lambda: "Show a setup code on the frame" in text_of(driver, "main"), timeout=20)
        fits_the_phone(driver, "first run")
        driver.find_element(By.XPATH, "//button[contains(., 'Show a setup code')]").click()
        until("the setup form", lambda: driver.current_url.endswith("/setup"), timeout=20)
        expect(frame.daemon.ask("status")["pairing"] is not None, "no code on the frame's screen")
        # Read off the frame: as root on its socket (a new code, the one on the screen now).
        code = frame.daemon.ask("pair setup")["code"]
        driver.find_element(By.ID, "code").send_keys(code)
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.ID, "again").send_keys(PASSWORD)
        shot("setup")
        driver.find_element(By.XPATH, "//button[contains(., 'Set the password')]").click()
        until("the Now page", lambda: driver.current_url.endswith("/now"), timeout=20)
        expect(os.path.exists(os.path.join(frame.state, "owner.bcrypt")), "no password kept")
        driver.find_element(By.CSS_SELECTOR, "nav .signout button").click()
        until("signed out", lambda: "/login" in driver.current_url, timeout=20)
        return "the code from the frame's screen, then a password of the owner's choosing"

    def sign_in():
        driver.get(frame.origin + "/")
        until("the sign-in page", lambda: "/login" in driver.current_url and count_of(driver, "#password") == 1,
              timeout=20)
        fits_the_phone(driver, "sign in")
        shot("login")
        driver.find_element(By.ID, "password").send_keys("not the password")
        driver.find_element(By.CSS_SELECTOR, "form.login button").click()
        until("the refusal", lambda: "not the password" in text_of(driver, "body"), timeout=20)
        driver.find_element(By.ID, "password").send_keys(PASSWORD)
        driver.find_element(By.CSS_SELECTOR, "form.login button").click()
        until("the Now page", lambda: driver.current_url.endswith("/now"), timeout=20)
        until("the frame's picture", lambda: script(driver, 
            "var i = document.getElementById('now'); return i && i.complete && i.naturalWidth"), timeout=20)
        width = driver.execute_script("return document.getElementById('now').naturalWidth")
        expect(width == 320, f"the picture on the page is {width} px wide, the frame's 320")
        fits_the_phone(driver, "Now")
        shot("now")
        shot("now-dark", dark=True)
        return "a wrong password refused, then signed in; the frame's picture shown"

    def tap_next():
        before = frame.daemon.ask("status")["index"]
        driver.execute_script("window.stillThisPage = true")
        # A figure, not a check: from the tap to the frame's new picture loaded in the page.
        driver.execute_script("""
            document.getElementById('now').addEventListener('load', function () { window.shownAt = performance.now(); },
                                                            { once: true });
            document.querySelector('button[aria-label=Next]').addEventListener('click', function () {
                window.tappedAt = performance.now(); }, { once: true });""")
        driver.find_element(By.CSS_SELECTOR, "button[aria-label=Next]").click()
        until("the frame moved", lambda: frame.daemon.ask("status")["index"] == before + 1, timeout=20)
        until("the page says so (the live view, no reload)", lambda: f"Picture {before + 2} of" in text_of(driver, "#status"),
              timeout=20)
        until("the page's picture fetched again", lambda: script(driver, 
            "var i = document.getElementById('now'); return i.complete && i.dataset.generation !== '0'"), timeout=20)
        expect(driver.execute_script("return window.stillThisPage === true"), "the page was loaded again")
        until("the new picture loaded", lambda: script(driver, "return window.shownAt !== undefined"), timeout=20)
        suite.figures["a tap on Next to the new picture in the live view, ms (debug build, 320x200)"] = round(
            driver.execute_script("return window.shownAt - window.tappedAt"))
        return f"picture {before + 1} -> {before + 2}, on the frame and on the page (live)"

    def hide_the_picture_on_screen():
        on_screen = frame.daemon.ask("status")["image"]
        driver.find_element(By.XPATH, "//button[contains(., 'Hide this picture')]").click()
        until("the picture hidden", lambda: frame.daemon.ask("list")["hidden"] == [on_screen], timeout=20)
        driver.find_element(By.LINK_TEXT, "Photos").click()
        name = os.path.basename(on_screen)
        until("the Unhide button", lambda: count_of(driver, f'button[aria-label="Unhide {name}"]') == 1, timeout=20)
        driver.find_element(By.CSS_SELECTOR, f'button[aria-label="Unhide {name}"]').click()
        until("the picture back", lambda: on_screen in frame.listed_paths(), timeout=20)
        return f"{name} hidden from the Now page, back from Photos"

    def upload_from_the_phone():
        driver.find_element(By.LINK_TEXT, "Photos").click()
        until("the Photos page", lambda: driver.current_url.endswith("/photos"), timeout=20)
        fits_the_phone(driver, "Photos")
        folder = os.path.join(suite.folder, "camera-roll")
        os.makedirs(folder)
        files = {"IMG_0001.jpg": os.path.join(IMAGES, "03-portrait.jpg"),
                 "IMG_0002.HEIC": os.path.join(FIXTURES, "exif-6.heic"),
                 "drawing.png": os.path.join(IMAGES, "04-panels.png"),
                 "IMG_0003.MP4": None}
        for name, source in files.items():
            path = os.path.join(folder, name)
            if source:
                shutil.copy(source, path)
            else:
                with open(path, "wb") as f:
                    f.write(clip(folder))
        driver.find_element(By.ID, "files").send_keys("\n".join(os.path.join(folder, n) for n in files))
        driver.find_element(By.CSS_SELECTOR, "form.upload button").click()
        # One progress bar per file, while they go.
        until("a progress bar per file", lambda: count_of(driver, "#progress progress") == 4, timeout=20)
        expected = {"IMG_0001.jpg", "IMG_0002.heic", "drawing.png", "IMG_0003.mp4"}
        until("the four files in the daemon's list", lambda: expected <= set(frame.listed()), timeout=60)
        until("the page reloaded with them", lambda: all(n in text_of(driver, "ul.album") for n in expected), timeout=30)
        shot("photos")
        return f"{len(expected)} files, one a HEIC and one a clip, in the daemon's list and on the page"

    def change_a_setting():
        driver.find_element(By.LINK_TEXT, "Settings").click()
        until("the Settings page", lambda: driver.current_url.endswith("/settings"), timeout=20)
        fits_the_phone(driver, "Settings")
        driver.find_element(By.CSS_SELECTOR, "#s-autoplay summary").click()
        field = driver.find_element(By.ID, "v-autoplay.interval")
        field.clear()
        field.send_keys("9")
        shot("settings")
        field.find_element(By.XPATH, "./ancestor::form").find_element(By.TAG_NAME, "button").click()
        until("the frame's interval", lambda: frame.daemon.ask("status")["autoplay"]["interval"] == 9, timeout=20)
        until("the page says it is kept", lambda: "kept on this frame" in text_of(driver, "#k-autoplay\\.interval"),
              timeout=20)
        frame.restart_daemon()
        expect(frame.daemon.ask("status")["autoplay"]["interval"] == 9, "the interval did not outlive a restart")
        driver.find_element(By.LINK_TEXT, "Status").click()
        until("the Status page", lambda: "Disk" in text_of(driver, "main"), timeout=20)
        fits_the_phone(driver, "Status")
        shot("status")
        return "interval 9 in status, and after a restart"

    def a_guest_pairs_uploads_and_is_revoked():
        # The owner asks for a code on the Settings page.
        driver.find_element(By.LINK_TEXT, "Settings").click()
        until("the Settings page", lambda: driver.current_url.endswith("/settings"), timeout=20)
        driver.find_element(By.XPATH, "//button[contains(., 'Pair a guest')]").click()
        until("the code", lambda: len(text_of(driver, "#guest-code")) == 6, timeout=20)
        code = text_of(driver, "#guest-code")
        shot("guests")
        # The guest, in a browser of its own.
        guest = browser()
        try:
            guest.get(frame.origin + "/login")
            guest.find_element(By.LINK_TEXT, "A guest with a code from the frame? Join here.").click()
            until("the pairing page", lambda: guest.current_url.endswith("/pair"), timeout=20)
            guest.find_element(By.ID, "code").send_keys(code)
            guest.find_element(By.ID, "name").send_keys("Anna's phone")
            guest.find_element(By.XPATH, "//button[contains(., 'Join')]").click()
            until("the guest's Now page", lambda: guest.current_url.endswith("/now"), timeout=20)
            nav = text_of(guest, "nav")
            expect("Settings" not in nav, f"a guest is offered Settings: {nav}")
            guest.find_element(By.LINK_TEXT, "Photos").click()
            until("the guest's Photos page", lambda: guest.current_url.endswith("/photos"), timeout=20)
            picture = os.path.join(suite.folder, "from-anna.jpg")
            shutil.copy(os.path.join(IMAGES, "05-glow.webp"), picture.replace(".jpg", ".webp"))
            guest.find_element(By.ID, "files").send_keys(picture.replace(".jpg", ".webp"))
            guest.find_element(By.CSS_SELECTOR, "form.upload button").click()
            until("the guest's picture in the daemon's list", lambda: "from-anna.webp" in frame.listed(), timeout=60)
            # The owner revokes it.
            driver.get(frame.origin + "/settings")
            until("the guest on the owner's page", lambda: "Anna's phone" in text_of(driver, "#guests"), timeout=20)
            driver.find_element(By.CSS_SELECTOR, "button[aria-label=\"Revoke Anna's phone\"]").click()
            until("the guest gone", lambda: "No guest is paired" in text_of(driver, "#guests"), timeout=20)
            guest.get(frame.origin + "/photos")
            until("the revoked guest sent to sign in", lambda: "/login" in guest.current_url, timeout=20)
            expect("from-anna.webp" in frame.listed(), "revoking took the guest's picture")
        finally:
            guest.quit()
        return f"code {code} from the owner's page, the guest joined and uploaded, then was revoked"

    def over_https():
        tls, page = web_https.https_frame(suite, lambda name, idle, extra: Frame(suite, name, idle_timeout=idle,
                                                                                 extra=extra), PASSWORD)
        # This browser trusts the page's key and no other (as a phone that
        # was told once to trust the frame's certificate).
        certificate = os.path.join(suite.folder, "tls", "page.crt")
        spki = subprocess.run(f"openssl x509 -in {certificate} -pubkey -noout | openssl pkey -pubin "
                              "-outform der | openssl dgst -sha256 -binary | base64", shell=True, check=True,
                              capture_output=True, text=True).stdout.strip()
        phone = browser(f"--ignore-certificate-errors-spki-list={spki}")
        try:
            # An address typed without https:// is sent there.
            phone.get(f"http://127.0.0.1:{tls.port}/")
            until("the sign-in page over HTTPS", lambda: phone.current_url.startswith(page.origin + "/login")
                  and count_of(phone, "#password") == 1, timeout=20)
            phone.find_element(By.ID, "password").send_keys(PASSWORD)
            phone.find_element(By.CSS_SELECTOR, "form.login button").click()
            until("the Now page", lambda: phone.current_url == page.origin + "/now", timeout=20)
            cookies = phone.get_cookies()
            expect(cookies and all(c["secure"] and c["httpOnly"] for c in cookies), f"the cookies over HTTPS: {cookies}")
            before = tls.daemon.ask("status")["index"]
            phone.find_element(By.CSS_SELECTOR, "button[aria-label=Next]").click()
            until("the frame moved", lambda: tls.daemon.ask("status")["index"] == before + 1, timeout=20)
            until("the page says so through the live view (wss://)",
                  lambda: f"Picture {before + 2} of" in text_of(phone, "#status"), timeout=20)
            errors = console_errors(phone)
            expect(not errors, f"the console over HTTPS: {errors}")
        finally:
            phone.quit()
        return "http:// sent to https://, signed in (the cookie Secure), Next through the live view over wss://"

    def no_console_errors():
        errors = console_errors(driver)
        expect(not errors, f"the browser's console has errors (a CSP violation is one): {errors}")
        return "none"

    def bytes_for_now():
        # What a phone downloads for the Now page, from Chrome's own log of the requests.
        driver.get_log("performance")
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        driver.get(frame.origin + "/now")
        until("the frame's picture", lambda: script(driver, 
            "var i = document.getElementById('now'); return i && i.complete && i.naturalWidth"), timeout=20)
        time.sleep(0.5)
        total = 0
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.loadingFinished":
                total += int(message["params"].get("encodedDataLength", 0))
        expect(total > 0, "Chrome logged no bytes for the Now page")
        suite.figures["bytes downloaded for the Now page (320x200 frame, no cache)"] = total
        return f"{total} bytes"

    try:
        suite.check("first run: a setup code on the frame's screen, then a password of the owner's choosing", first_run)
        suite.check("at a phone's size: sign in (a wrong password first), the Now page shows the frame's picture",
                    sign_in)
        suite.check("tapping Next moves the frame and the page says where it is", tap_next)
        suite.check("hide the picture on screen, undo from Photos", hide_the_picture_on_screen)
        suite.check("three pictures (one HEIC) and a clip from the file picker, a progress bar each, reach the daemon's "
                    "list and the page", upload_from_the_phone)
        suite.check("Settings: the interval changed on the phone, in status at once and after a restart", change_a_setting)
        suite.check("a guest pairs with a code the owner's page shows, uploads, and the owner revokes it",
                    a_guest_pairs_uploads_and_is_revoked)
        suite.check("no error in the browser's console (no Content-Security-Policy violation)", no_console_errors)
        suite.check("over HTTPS (the frame's certificate trusted by this phone): http:// sent to https://, signed in, "
                    "Next through the live view over wss://, no console error", over_https)
        suite.check("what the Now page costs a phone", bytes_for_now)
    finally:
        driver.quit()
        for f in suite.cleanup_frames:
            f.stop()
    shutil.rmtree(suite.folder, ignore_errors=True)
    for name, value in suite.figures.items():
        print(f"figure: {name}: {value}")
    for name, error in suite.failed:
        print(f"FAILED: {name}: {error}")
    print(f"browser: {len(suite.passed)} passed, {len(suite.failed)} failed")
    return 1 if suite.failed else 0


if __name__ == "__main__":
    sys.exit(main())
