#!/bin/sh
# A language server that crashes at once (the bench must report it).
kill -SEGV $$
