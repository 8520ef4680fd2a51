// A module with side effects and no service: the CLI must say so and exit.
setInterval(() => {}, 1000);
export const nothing = 1;
