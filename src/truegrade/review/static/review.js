// truegrade review: keyboard shortcuts on an item's page, the dashboard's refresh, the lint of a
// draft criterion, and labels that survive the tab closing.
// No inline script anywhere: the page's Content-Security-Policy allows this file only.
(function () {
  "use strict";
  // Fetch `url` as a page and put its <main> in place of this one's (then focus `anchor`).
  function reloadMain(url, anchor) {
    return fetch(url, { headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) { return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("main");
        if (fresh) { document.querySelector("main").replaceWith(fresh); }
        var back = anchor && document.getElementById(anchor);
        if (back) { back.focus(); }
      });
  }
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
    window.setInterval(function () { reloadMain(live.getAttribute("data-refresh"), null); }, 3000);
  }
  // The lint findings of a criterion, as the expert types (server-side `rubric lint`).
  var box = document.querySelector("textarea[data-lint]");
  if (box) { lintAsTyped(box); }
  function lintAsTyped(box) {
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
  }
  // Labels are sent with fetch(keepalive): a label clicked just before the tab closes still
  // reaches the server (the browser finishes a keepalive request after the page is gone). The
  // page then fetches itself again, so what the server now shows (the grader's verdict, the
  // others' labels) replaces what was blind. Without this script the forms post as plain forms.
  function problem(form, text) {
    var box = form.querySelector(".problem") || document.createElement("p");
    box.className = "problem";
    box.setAttribute("role", "alert");
    box.textContent = text;
    form.appendChild(box);
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.label")) { return; }
    event.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    var submitter = event.submitter;
    var typing = document.activeElement && document.activeElement.name === "reason";
    if (typing) {
      // Enter in the reason keeps the label already chosen; it never chooses one
      var chosen = form.querySelector("button.chosen");
      if (!chosen) { problem(form, "Choose Met or Not met first."); return; }
      submitter = chosen;
    }
    if (submitter && submitter.name) { body.set(submitter.name, submitter.value); }
    var article = form.closest(".criterion");
    fetch(form.action, {
      method: "POST",
      body: body,
      keepalive: true,
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (r) {
      if (r.ok) { return reloadMain(window.location.pathname, article ? article.id : null); }
      return r.json().then(function (data) { problem(form, data.error || ("error " + r.status)); });
    }).catch(function () { problem(form, "Not saved: the server did not answer."); });
  });
}());
