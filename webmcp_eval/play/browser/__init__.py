"""The browser: launched or connected (browser.py), its contexts (session.py), screenshots and Playwright traces."""
