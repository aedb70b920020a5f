;;; test.el --- eglot (Debian's elpa-eglot) against tosa-lsp, in batch  -*- lexical-binding: t -*-
;;
;; PATH=/dir/of/tosa-lsp:$PATH TOSA_EMACS_INIT=snippet.el \
;;   TOSA_EXAMPLE=copy-of-example.mlir emacs --batch -q -l test.el
;;
;; The configuration is the one editors/README.md gives (a mode for .mlir,
;; `eglot-server-programs', `eglot-ensure'); then diagnostics (flymake), a hover (eldoc)
;; and a quick fix applied through eglot's own code-action path, the
;; result verified with mlir-opt-22.

(require 'eglot)
(require 'flymake)

(defvar tl-passed 0)
(defvar tl-failed 0)
(defvar tl-wait 15 "Seconds per wait.")

(defun tl-log (fmt &rest args)
  (princ (concat (apply #'format fmt args) "\n")))

(defun tl-check (ok what &optional got)
  (if ok
      (setq tl-passed (1+ tl-passed))
    (setq tl-failed (1+ tl-failed))
    (tl-log "FAIL: %s" what)
    (when got (tl-log "  got: %S" got)))
  ok)

(defun tl-wait (pred)
  "Run timers and process output until PRED is non-nil or `tl-wait' seconds."
  (let ((deadline (+ (float-time) tl-wait)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun tl-finish ()
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (tl-log "emacs: %d passed, %d failed" tl-passed tl-failed)
  (kill-emacs (if (> tl-failed 0) 1 0)))

;; Every publishDiagnostics eglot handles, newest first (to wait for the
;; one that follows an edit).
(defvar tl-publishes nil)
(advice-add 'eglot-handle-notification :after
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push (plist-get params :diagnostics) tl-publishes))))

(defun tl-errors-in (diags)
  (cl-remove-if-not (lambda (d) (eql (plist-get d :severity) 1)) (append diags nil)))

;; The configuration editors/README.md gives (run.sh extracts it): a
;; mlir-mode, `eglot-server-programs' with initializationOptions and
;; `eglot-ensure' on the mode's hook. `tosa-lsp' is found on PATH.
(load (getenv "TOSA_EMACS_INIT") nil t)

(setq eglot-sync-connect tl-wait
      eglot-autoreconnect nil
      eglot-events-buffer-size 0
      ;; No prompts in batch.
      eglot-confirm-server-initiated-edits nil)

(condition-case err
    (progn
      (find-file (getenv "TOSA_EXAMPLE"))
      (tl-check (eq major-mode 'mlir-mode) "mlir-mode from auto-mode-alist" major-mode)
      ;; eglot-ensure connects after the command that opened the file.
      (run-hooks 'post-command-hook)
      (tl-wait (lambda () (eglot-current-server)))
      (let ((server (eglot-current-server)))
        (tl-check (and server (jsonrpc-running-p server)) "eglot started tosa-lsp")
        (tl-check (eglot--server-capable :hoverProvider) "server has hover")
        (tl-check (eglot--server-capable :codeActionProvider) "server has code actions")

        ;; Diagnostics: flymake gets the server's one error.
        (flymake-start)
        (tl-check (tl-wait (lambda () (flymake-diagnostics)))
                  "flymake has diagnostics")
        (let* ((diags (flymake-diagnostics))
               (errors (cl-remove-if-not
                        (lambda (d) (eq (flymake-diagnostic-type d) 'eglot-error))
                        diags))
               (err (car errors)))
          (tl-check (= (length errors) 1) "one error diagnostic"
                    (mapcar #'flymake-diagnostic-text diags))
          (when err
            (tl-check (string-match-p "tosa.sub\\|4x3\\|result"
                                      (flymake-diagnostic-text err))
                      "the error is about the tosa.sub result"
                      (flymake-diagnostic-text err))
            (tl-check (= (line-number-at-pos (flymake-diagnostic-beg err))
                         (progn (goto-char (point-min))
                                (search-forward "tosa.sub")
                                (line-number-at-pos)))
                      "the error is on the tosa.sub line")))

        ;; Hover through eldoc's hover function.
        (goto-char (point-min))
        (search-forward "tosa.add")
        (backward-char 3)
        (let (doc)
          (eglot-hover-eldoc-function (lambda (s &rest _) (setq doc (or s ""))))
          (tl-check (tl-wait (lambda () doc)) "hover answered")
          (tl-check (and doc (string-match-p "Inferred" doc) (string-match-p "2x3" doc))
                    "hover shows the inferred shape 2x3" doc))

        ;; A quick fix: the code actions on the tosa.sub line, the fix of its
        ;; result type applied by eglot (workspace edit on the buffer).
        (goto-char (point-min))
        (search-forward "tosa.sub")
        (let* ((beg (line-beginning-position))
               (end (line-end-position))
               (actions (eglot-code-actions beg end "quickfix"))
               (fix (cl-find-if (lambda (a) (string-match-p "1x3" (plist-get a :title)))
                                actions)))
          (tl-check fix "a quick fix that changes the result to 1x3"
                    (mapcar (lambda (a) (plist-get a :title)) actions))
          (when fix
            (eglot--read-execute-code-action (list fix) server "quickfix")
            (tl-check (save-excursion
                        (goto-char (point-min))
                        (search-forward "-> tensor<1x3xf32>" nil t))
                      "the fix is applied to the buffer")
            ;; What eglot's idle timer and flymake's change timer do (batch
            ;; Emacs is never idle).
            (let ((before (length tl-publishes)))
              (eglot--signal-textDocument/didChange)
              (tl-check (tl-wait (lambda () (> (length tl-publishes) before)))
                        "the server publishes again after the edit")
              (tl-check (null (tl-errors-in (car tl-publishes)))
                        "that publish has no error" (car tl-publishes)))
            (flymake-start)
            (tl-check (tl-wait (lambda () (null (cl-remove-if-not
                                                 (lambda (d) (eq (flymake-diagnostic-type d) 'eglot-error))
                                                 (flymake-diagnostics)))))
                      "no error left after the fix"
                      (mapcar #'flymake-diagnostic-text (flymake-diagnostics)))
            (let ((out (with-temp-buffer
                         (list (call-process-region
                                (with-current-buffer (find-buffer-visiting (getenv "TOSA_EXAMPLE"))
                                  (buffer-string))
                                nil "mlir-opt-22" nil t nil "--split-input-file")
                               (buffer-string)))))
              (tl-check (eq (car out) 0) "mlir-opt-22 accepts the fixed file" (cadr out)))))))
  (error (tl-check nil (format "error: %S" err))))
(tl-finish)
