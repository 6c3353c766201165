# shardcheck.bash — bash completion for shardcheck (installed as
# share/bash-completion/completions/shardcheck).  The options listed per
# command are those of src/cli; tests/install (suite docs) fails when one
# is missing.

_shardcheck() {
  local cur prev words cword
  if declare -F _init_completion >/dev/null; then
    _init_completion -s || return
  else
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  fi

  local cmd="" sub="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      -*) ;;
      *) if [[ -z $cmd ]]; then cmd=${words[i]}; elif [[ $cmd == lemmas && -z $sub ]]; then sub=${words[i]}; fi ;;
    esac
  done

  if [[ -z $cmd ]]; then
    COMPREPLY=($(compgen -W "check show ops lemmas --version --help" -- "$cur"))
    return
  fi

  case $prev in
    -f|--format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
    --lemmas) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --html|--dot) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --seed|--instances|-j|--jobs) return ;;
  esac
  if [[ $cur == --color=* ]]; then
    COMPREPLY=($(compgen -W "auto always never" -- "${cur#--color=}"))
    return
  fi
  if [[ $cur == --explain=* ]]; then
    COMPREPLY=($(compgen -W "all" -- "${cur#--explain=}"))
    return
  fi

  local opts=""
  case $cmd in
    check) opts="--format --lemmas --explain --explain=all --quiet --no-memo --jobs --validate --html --dot --color= --time-limit --memory-limit --max-enodes --max-input-bytes --help" ;;
    show) opts="--format --lemmas --no-lemmas --help" ;;
    ops) opts="--format --help" ;;
    lemmas)
      if [[ -z $sub ]]; then
        COMPREPLY=($(compgen -W "check" -- "$cur"))
        return
      fi
      opts="--lemmas --seed --instances --format --help" ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    [[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
    return
  fi
  case $cmd in
    check|show)
      # a bundle: a .json file or a folder holding bundle.json
      COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
      compopt -o filenames 2>/dev/null ;;
  esac
}
complete -F _shardcheck shardcheck
