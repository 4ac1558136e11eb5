// Strata's only script: a run page's log follows the run while it runs,
// from the server's event stream (Server-Sent Events). Without it the page
// still shows the log as it was when loaded.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var log = document.getElementById("log");
  if (!log || !log.dataset.events) return;
  var state = document.getElementById("run-state");
  var src = new EventSource(log.dataset.events);
  src.addEventListener("log", function (e) {
    var follow = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
    log.append(document.createTextNode(JSON.parse(e.data)));
    if (follow) log.scrollTop = log.scrollHeight;
  });
  src.addEventListener("done", function (e) {
    src.close();
    log.classList.remove("live");
    var d = JSON.parse(e.data);
    // The stored log was rewritten at the end (values the plan marked
    // sensitive masked): show it as it is now.
    if (typeof d.log === "string") log.textContent = d.log;
    if (state) {
      // As the page says it: the check's conclusion once the run succeeded.
      var shown = d.status === "succeeded" && d.conclusion ? d.conclusion : d.status;
      state.textContent = shown;
      state.className = "state " + shown;
    }
  });
});
