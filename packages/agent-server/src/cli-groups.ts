/**
 * `--group name=a,b` (repeatable): the server's named groups of principals, for tool policies
 * (docs/approvals.md#organisation-policies). A group named twice, an empty name or an empty member is a bad flag.
 */
export function principalGroups(flags: readonly string[]): Record<string, string[]> {
  const groups: Record<string, string[]> = {}
  for (const spec of flags) {
    const eq = spec.indexOf('=')
    const name = spec.slice(0, Math.max(eq, 0))
    const members = spec.slice(eq + 1).split(',')
    if (eq <= 0 || name !== name.trim() || members.some((m) => m.trim() === '' || m !== m.trim()))
      throw new Error(`--group must look like name=principal,principal (got "${spec}")`)
    if (Object.hasOwn(groups, name)) throw new Error(`--group ${name} is given twice`)
    groups[name] = [...new Set(members)]
  }
  return groups
}
