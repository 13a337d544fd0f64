/** Tree entries per page of GET /repos/{o}/{r}/git/trees/{sha}: the default and the most a caller may ask for. */
export const GIT_TREES_PER_PAGE = 1000;
