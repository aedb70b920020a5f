" Syntax highlighting for MLIR (TOSA, linalg, func, ...).
if exists('b:current_syntax')
  finish
endif

syntax case match

" Comments and split markers.
syntax keyword mlirTodo contained TODO FIXME XXX NOTE
syntax match mlirComment "//.*$" contains=mlirTodo,@Spell
syntax match mlirSplit "^\s*//\s*-----\s*$"

" Strings and numbers.
syntax region mlirString start=+"+ skip=+\\\\\|\\"+ end=+"+ contains=mlirOpString
syntax match mlirNumber "\<-\?\d\+\>"
syntax match mlirNumber "\<-\?\d\+\.\d*\([eE][-+]\?\d\+\)\?\>"
syntax match mlirNumber "\<0x\x\+\>"
syntax keyword mlirBool true false

" Operations: dialect.op (bare) and "dialect.op" (generic form).
syntax match mlirOp "\<\h\w*\.\h[0-9A-Za-z_.$]*\>"
syntax match mlirOpString +"\h\w*\.\h[0-9A-Za-z_.$]*"+
syntax keyword mlirKeyword return func module attributes loc to step iter_args ins outs

" SSA values, block labels, symbols.
syntax match mlirValue "%[0-9A-Za-z_.$-]\+\(#\d\+\)\?"
syntax match mlirBlock "\^[0-9A-Za-z_.$-]\+"
syntax match mlirSymbol "@[0-9A-Za-z_.$-]\+"
syntax match mlirSymbol +@"[^"]*"+

" Types: builtin scalars and shaped types with static/dynamic dims.
syntax match mlirType "\<[isu]\?i\d\+\>"
syntax match mlirType "\<\(f16\|bf16\|f32\|f64\|f80\|f128\|tf32\|index\|none\)\>"
syntax region mlirShapedType matchgroup=mlirType start="\<\(tensor\|memref\|vector\|complex\|tuple\)<" end=">" contains=mlirDim,mlirDynDim,mlirType,mlirShapedType,mlirAttrAlias,mlirNumber,mlirString oneline
syntax match mlirDim contained "\d\+\ze\s*x"
syntax match mlirDynDim contained "?"
syntax match mlirDialectType "!\h[0-9A-Za-z_.$]*\(<[^>]*>\)\?"

" Attributes: aliases #map, dictionaries {...}.
syntax match mlirAttrAlias "#\h[0-9A-Za-z_.$]*"
syntax region mlirAttrDict matchgroup=mlirDelim start="{\ze\s*\h\w*\s*=" end="}" contains=mlirAttrName,mlirNumber,mlirString,mlirBool,mlirType,mlirShapedType,mlirAttrAlias,mlirSymbol,mlirAttrDict,mlirArray transparent
syntax match mlirAttrName contained "\<\h\w*\ze\s*="
syntax region mlirArray contained start="\[" end="\]" transparent contains=mlirNumber,mlirString,mlirBool,mlirType,mlirShapedType,mlirAttrAlias,mlirSymbol,mlirArray

highlight default link mlirComment Comment
highlight default link mlirTodo Todo
highlight default link mlirSplit PreProc
highlight default link mlirString String
highlight default link mlirOpString Statement
highlight default link mlirNumber Number
highlight default link mlirBool Boolean
highlight default link mlirOp Statement
highlight default link mlirKeyword Keyword
highlight default link mlirValue Identifier
highlight default link mlirBlock Label
highlight default link mlirSymbol Function
highlight default link mlirType Type
highlight default link mlirDim Number
highlight default link mlirDynDim Special
highlight default link mlirDialectType Type
highlight default link mlirAttrAlias PreProc
highlight default link mlirAttrName Identifier
highlight default link mlirDelim Delimiter

let b:current_syntax = 'mlir'
