/**
 * A Markdown document that no render budget can see through: remark's list parsing is quadratic in the number of
 * items, and these 100 000 one-word items (400 KB, under the default MARKDOWN_MAX_SIZE of 512 KiB) take about
 * 100 s of CPU on a 2-core build machine (40 000 items 13 s, 80 000 items 65 s). Tests that need a render to run
 * into its time budget (seconds) use it, so that the outcome never depends on how fast the machine is: a document
 * that is merely "slow" finishes in time on a faster machine.
 */
export const UNFINISHABLE_MARKDOWN = '- a\n'.repeat(100_000);
