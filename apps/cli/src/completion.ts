// Shell completion for bash, zsh and fish. commander has none of its own, so the scripts call back into tpfleet
// (`tpfleet __complete WORDS...`), which answers from the same command tree the parser uses: a new command or
// option completes without touching the scripts.
import type { Command } from 'commander';
import { UsageError } from './errors.js';

const BASH = `# tpfleet completion for bash: eval "$(tpfleet completion bash)"
_tpfleet() {
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$(tpfleet __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _tpfleet tpfleet
`;

const ZSH = `#compdef tpfleet
# tpfleet completion for zsh: eval "$(tpfleet completion zsh)" (after compinit)
_tpfleet() {
  local -a candidates
  candidates=("\${(@f)$(tpfleet __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- $candidates
}
compdef _tpfleet tpfleet
`;

const FISH = `# tpfleet completion for fish: tpfleet completion fish | source
complete -c tpfleet -f -a '(tpfleet __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;

export function completionScript(shell: string): string {
  switch (shell) {
    case 'bash':
      return BASH;
    case 'zsh':
      return ZSH;
    case 'fish':
      return FISH;
    default:
      throw new UsageError(`completion: expected bash, zsh or fish, got "${shell}"`);
  }
}

/** Candidates for the last word, given the words typed before it (program name excluded). */
export function complete(program: Command, words: string[]): string[] {
  const typed = words.slice(0, -1);
  const current = words.at(-1) ?? '';
  let cmd = program;
  for (const word of typed) {
    const sub = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) {
      cmd = sub;
    }
  }
  const options = [cmd, ...ancestors(cmd)].flatMap((c) => c.options.flatMap((o) => [o.long, o.short])).filter(Boolean);
  const subs = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).map((c) => c.name());
  const candidates = current.startsWith('-') ? (options as string[]) : subs;
  return candidates.filter((c) => c.startsWith(current));
}

function ancestors(cmd: Command): Command[] {
  const out: Command[] = [];
  for (let c = cmd.parent; c; c = c.parent) {
    out.push(c);
  }
  return out;
}
