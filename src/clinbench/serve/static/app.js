// clinbench serve: the only script. Keeps a running campaign's progress counts live by polling
// its progress.json (same origin; the Content-Security-Policy allows nothing else).
"use strict";
(function () {
  function poll(el) {
    fetch(el.dataset.progress, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (p) {
        if (!p) { return; }
        ["done", "failed", "left", "planned"].forEach(function (k) {
          var span = el.querySelector("." + k);
          if (span) { span.textContent = String(p[k]); }
        });
        el.querySelector(".state").textContent = p.running ? "running" : "idle";
        if (p.running) { el.setAttribute("data-running", "1"); } else { el.removeAttribute("data-running"); }
      })
      .catch(function () {});
  }
  document.addEventListener("DOMContentLoaded", function () {
    var els = document.querySelectorAll("[data-progress]");
    els.forEach(poll);
    if (els.length) { setInterval(function () { els.forEach(poll); }, 2000); }
  });
})();
