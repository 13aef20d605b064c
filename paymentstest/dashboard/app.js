// The dashboard's live updates: every second, fetch the live part of the
// page again and put it in place when it changed. No other script runs.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.fetch) { return; }
  var last = live.innerHTML;
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
      if (html !== null && html !== last && !busy()) {
        last = html;
        live.innerHTML = html;
      }
    }).catch(function () {}).then(function () {
      window.setTimeout(tick, 1000);
    });
  }
  window.setTimeout(tick, 1000);
})();
