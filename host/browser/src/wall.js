// A login or CAPTCHA wall, on evidence: a visible password field or CAPTCHA
// widget, and no visible sign-out control (a signed-in page that happens to have
// a password form, such as a change-password page, is no wall). An expression,
// evaluated on its own (the page library is not needed). The sign-out scan reads
// every link's text: it runs only on a page that has the evidence. With the
// document's title and the HTTP status its document came with (0 when none
// came: an error page, a data: or about: document): a navigation reads all
// three in this one round trip.
(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const status = (nav && nav.responseStatus) || 0;
  const vis = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const any = (sel) => Array.from(document.querySelectorAll(sel)).some(vis);
  const wall = any('iframe[src*="recaptcha"],iframe[src*="hcaptcha"],iframe[src*="turnstile"],.g-recaptcha,.h-captcha,.cf-turnstile,[data-sitekey]') ? 'a CAPTCHA'
    : any('input[type=password]') ? 'a login form' : null;
  if (!wall) return { wall: null, title: document.title, status };
  const out = /(log ?out|sign ?out|log ?off|sign ?off)/i;
  const signedIn = Array.from(document.querySelectorAll('a,button,[role=button],[role=menuitem],input[type=submit]')).some((e) => out.test(e.innerText || e.value || e.getAttribute('aria-label') || '') && vis(e));
  return { wall: signedIn ? null : wall, title: document.title, status };
})()
