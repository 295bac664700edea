// truegrade review: keyboard shortcuts on an item's page, and the dashboard's refresh.
// No inline script anywhere: the page's Content-Security-Policy allows this file only.
(function () {
  "use strict";
  function focused() {
    var el = document.activeElement;
    return el && el.closest ? el.closest(".criterion") : null;
  }
  function criteria() { return Array.prototype.slice.call(document.querySelectorAll(".criterion")); }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) { return; }
    var list = criteria();
    var current = focused() || list[0];
    if (event.key === "j" || event.key === "k") {
      var at = list.indexOf(current) + (event.key === "j" ? 1 : -1);
      if (list[at]) { list[at].focus(); }
      event.preventDefault();
      return;
    }
    if (event.key === "m" || event.key === "x") {
      var button = current && current.querySelector("button[data-key='" + event.key + "']");
      if (button) { button.click(); event.preventDefault(); }
      return;
    }
    if (event.key === "n" || event.key === "p") {
      var link = document.querySelector("a[data-key='" + event.key + "']");
      if (link) { window.location = link.href; }
    }
  });
  var live = document.querySelector("[data-refresh]");
  if (live) {
    window.setInterval(function () {
      fetch(live.getAttribute("data-refresh"), { headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) { return; }
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.querySelector("main");
          if (fresh) { document.querySelector("main").replaceWith(fresh); }
        });
    }, 3000);
  }
}());
// The lint findings of a criterion, as the expert types (server-side `rubric lint`).
(function () {
  "use strict";
  var box = document.querySelector("textarea[data-lint]");
  if (!box) { return; }
  var list = document.querySelector(".findings");
  var csrf = document.querySelector("input[name=csrf]");
  var timer = null;
  box.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(function () {
      var body = new URLSearchParams({ text: box.value, csrf: csrf ? csrf.value : "" });
      fetch(box.getAttribute("data-lint"), { method: "POST", body: body })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (!data) { return; }
          list.textContent = "";
          data.findings.forEach(function (f) {
            var item = document.createElement("li");
            item.className = f.severity;
            item.textContent = f.code + ": " + f.reason;
            list.appendChild(item);
          });
        });
    }, 300);
  });
}());
