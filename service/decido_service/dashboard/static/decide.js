// The decide form: a chosen file is read into the options box, so what is sent is shown
// (and kept when the form comes back with a message).
(function () {
  "use strict";
  var file = document.getElementById("options_file");
  var box = document.getElementById("options");
  if (!file || !box) return;
  file.addEventListener("change", function () {
    if (!file.files.length) return;
    file.files[0].text().then(function (text) { box.value = text; });
  });
})();
