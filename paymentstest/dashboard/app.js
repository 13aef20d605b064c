// The dashboard's live updates: every second, fetch the live part of the
// page again and put it in place when something other than the server's
// time changed (replacing it only then keeps buttons and scrolling still).
// No other script runs.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.fetch) { return; }
  var clock = /<time id="now">([^<]*)<\/time>/;
  function withoutClock(html) { return html.replace(clock, ""); }
  var last = withoutClock(live.innerHTML);
  function busy() {
    var a = document.activeElement;
    return a && live.contains(a) && (a.tagName === "INPUT" || a.tagName === "SELECT");
  }
  function tick() {
    fetch(window.location.pathname + window.location.search, {
      headers: { "X-Dashboard-Live": "1" },
      credentials: "same-origin",
      cache: "no-store"
    }).then(function (r) {
      return r.ok ? r.text() : null;
    }).then(function (html) {
      if (html === null) { return; }
      var next = withoutClock(html);
      if (next !== last && !busy()) {
        last = next;
        live.innerHTML = html;
        return;
      }
      var now = document.getElementById("now"), m = clock.exec(html);
      if (now && m) { now.textContent = m[1]; }
    }).catch(function () {}).then(function () {
      window.setTimeout(tick, 1000);
    });
  }
  window.setTimeout(tick, 1000);
})();
